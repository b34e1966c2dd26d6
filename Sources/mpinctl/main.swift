import MPinCtlCommands
import MPinUserCommands

// One program for mpinctl and mpin, chosen by the name it is run as (as busybox does): the
// libpam-mpin package installs /usr/bin/mpin as a symbolic link to /usr/sbin/mpinctl, so that
// the statically linked Swift runtime is carried once (docs/PERFORMANCE.md §2.6). Any other
// name is mpinctl. `swift build` still builds a separate mpin (Sources/mpin) for development.
let invokedAs = CommandLine.arguments.first?.split(separator: "/").last ?? ""
if invokedAs == "mpin" { mpinMain() }
mpinctlMain()
