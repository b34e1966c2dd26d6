import ArgumentParser
import NIOCore
import NIOPosix

// Swift concurrency runs on the server's event loops, so a request's handler does not hop to
// another thread pool and back (two thread wake-ups per request on an idle server). This must
// happen on the main thread before any task starts, hence a main.swift rather than @main.
NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()

/// ArgumentParser's async entry point (an async context, so the commands' async `run()` is chosen).
func runCommand() async {
    await MPinServerCommand.main(nil)
}
await runCommand()
