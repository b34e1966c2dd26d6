#!/usr/bin/env bash
# Checks the manual pages under man/:
#   1. each renders with groff's warnings on (-ww) without a word on stderr, and, when mandoc is
#      installed, passes `mandoc -T lint -W warning` without a message;
#   2. each page documents what the code accepts, read from the sources: every pam.d option
#      and mpin.conf key, every return code of the module, every mpinctl and mpin-server
#      subcommand and option, mpinctl's exit statuses, config.json's keys and the data files.
#      The pages' option and key lists are checked the other way too: nothing that the code
#      does not accept.
# Run from the repository's root (make test-man).
# README covered here: "Every option and key: the manual pages" (Further reading), the promise that lets the README
# link man/ instead of repeating the reference.
set -u
cd "$(dirname "$0")/../.."
PAGES="man/pam_mpin.8 man/mpin.conf.5 man/mpinctl.8 man/mpin-server.8 man/mpin.1"
failures=0
fail() { echo "FAIL $*" >&2; failures=$((failures + 1)); }

# --- 1. Rendering -------------------------------------------------------------------------
for page in $PAGES; do
    [ -f "$page" ] || { fail "$page: missing"; continue; }
    out=$(groff -mandoc -ww -z "$page" 2>&1 >/dev/null)
    [ -z "$out" ] || fail "$page: groff -ww: $out"
    if command -v mandoc >/dev/null; then
        out=$(mandoc -T lint -W warning "$page" 2>&1)
        [ -z "$out" ] || fail "$page: mandoc -T lint: $out"
    fi
done
command -v mandoc >/dev/null || echo "test-man: mandoc not installed; only groff checked"

# --- 2. Coverage --------------------------------------------------------------------------
# kebab NAME: a Swift property or type name as ArgumentParser spells it on the command line
# (activationCode -> activation-code, TestBackend -> test-backend, OTP -> otp).
kebab() { sed -E 's/([a-z0-9])([A-Z])/\1-\2/g' <<<"$1" | tr 'A-Z' 'a-z'; }
# has PAGE REGEX: whether a line of PAGE matches the extended REGEX.
has() { grep -Eq -- "$2" "$1"; }

# The module's options: the literal cases and the config keys a module line may set.
module_options=$( {
    grep -oE 'case \("[a-z_]+"' Sources/MPinLogin/ModuleOptions.swift | grep -oE '"[a-z_]+"'
    sed -n '/static let configKeys/,/]/p' Sources/MPinLogin/ModuleOptions.swift | grep -oE '"[a-z_]+":' 
} | tr -d '":' | sort -u)
config_keys=$(grep -oE '^ *"[a-z_]+": \{' Sources/MPinLogin/LoginConfig.swift | grep -oE '[a-z_]+' | sort -u)
[ -n "$module_options" ] && [ -n "$config_keys" ] || fail "could not read the options from Sources/MPinLogin"

for o in $module_options; do
    has man/pam_mpin.8 "^\.It Cm $o( |$)" || fail "pam_mpin.8: module option $o is not documented"
done
for o in $(sed -n '/^\.Sh OPTIONS/,/^\.Sh /p' man/pam_mpin.8 | grep -oE '^\.It Cm [a-z_]+' | awk '{print $3}'); do
    grep -qx "$o" <<<"$module_options" || fail "pam_mpin.8: documents $o, which the module does not accept"
done
for k in $config_keys; do
    has man/mpin.conf.5 "^\.It Cm $k No =" || fail "mpin.conf.5: key $k is not documented"
done
for k in $(sed -n '/^\.Sh KEYS/,/^\.Sh /p' man/mpin.conf.5 | grep -oE '^\.It Cm [a-z_]+' | awk '{print $3}'); do
    grep -qx "$k" <<<"$config_keys" || fail "mpin.conf.5: documents key $k, which the parser does not accept"
done

# Every code pam_sm_* returns: the helper's (returns and the outcome table; not conversation
# styles or items) and the module's own (not converse()'s PAM_CONV_ERR, which stays inside).
pam_codes=$( {
    grep -hE 'return .*PAM_|case .*: (options\.nouserok \? )?PAM_|^ *PAM_[A-Z_]+ *$|result\(PAM_' \
        Sources/mpin-pam-helper/*.swift | grep -vE 'tell\(|converse\(' | grep -oE 'PAM_[A-Z_]+'
    grep -hE 'return .*PAM_' pam/Module/*.swift | grep -v PAM_CONV_ERR | grep -oE '\bPAM_[A-Z_]+'
} | sort -u)
[ -n "$pam_codes" ] || fail "could not read the return codes from Sources/mpin-pam-helper and pam/Module"
for c in $pam_codes; do
    sed -n '/^\.Sh PAM RETURN CODES/,/^\.Sh /p' man/pam_mpin.8 | grep -Eq "^\.It Dv $c\$" \
        || fail "pam_mpin.8: return code $c is not documented"
done

# swift_options DIR: every option of the Swift files in DIR: the @Option/@Flag properties of
# ArgumentParser (mpin-server), kebab-cased, and the `.option("NAME"`/`.flag("NAME"` declarations
# of MPinCLI's parser (mpinctl).
swift_options() {
    { awk '/@(Option|Flag)([( ]|$)/ { want = 1 } want && match($0, /var [a-zA-Z0-9]+/) {
             print substr($0, RSTART + 4, RLENGTH - 4); want = 0 }' "$1"/*.swift |
          while read -r name; do kebab "$name"; done
      grep -ohE '\.(option|flag)\("[a-z0-9-]+"' "$1"/*.swift | grep -oE '"[a-z0-9-]+"' | tr -d '"'
    } | sort -u
}
# swift_subcommands DIR: the names of every subcommand listed in DIR's command configurations.
swift_subcommands() {
    cat "$1"/*.swift | tr '\n' ' ' | grep -oE 'subcommands: \[[^]]*\]' | grep -oE '[A-Za-z]+\.self' | sed 's/\.self//' | sort -u |
        while read -r type; do
            # An explicit commandName in the type's configuration wins (ArgumentParser); MPinCLI's
            # declarations always name the command (`CommandDeclaration(` then `"NAME"`).
            explicit=$(grep -A3 -E "struct $type\b" "$1"/*.swift | grep -oE 'commandName: "[a-z-]+"|CommandDeclaration\($|CommandDeclaration\("[a-z-]+"|^[^"]*"[a-z-]+", abstract:' |
                       grep -oE '"[a-z-]+"' | head -1 | tr -d '"')
            echo "${explicit:-$(kebab "$type")}"
        done
}
for tool in mpinctl mpin-server; do
    page=man/$tool.8
    # mpinctl's commands are in a library (Sources/mpinctl is the program that runs them, and mpin's).
    src=Sources/$tool; [ "$tool" = mpinctl ] && src=Sources/MPinCtlCommands
    options=$(swift_options "$src") subcommands=$(swift_subcommands "$src")
    [ -n "$options" ] && [ -n "$subcommands" ] || fail "could not read $tool's options or subcommands"
    for o in $options; do has "$page" "Fl -$o( |$)" || fail "$page: option --$o is not documented"; done
    for s in $subcommands; do
        grep -E '^\.(.* )?(Ic|Cm) ' "$page" | grep -qw -- "$s" || fail "$page: subcommand $s is not documented"
    done
    # Lines naming the other tool cross-reference its options.
    other=$([ "$tool" = mpinctl ] && echo mpin-server || echo mpinctl)
    for o in $(grep -v -- "$other" "$page" | grep -ohE 'Fl -[a-z0-9-]+' | awk '{print $2}' | sed 's/^-//' | sort -u); do
        [ "$o" = help ] || grep -qx -- "$o" <<<"$options" || fail "$page: documents --$o, which $tool does not accept"
    done
done

# mpin (Sources/MPinUserCommands): every option and subcommand in mpin.1, and nothing else.
mpin_options=$(swift_options Sources/MPinUserCommands) mpin_subcommands=$(swift_subcommands Sources/MPinUserCommands)
[ -n "$mpin_options" ] && [ -n "$mpin_subcommands" ] || fail "could not read mpin's options or subcommands"
for o in $mpin_options; do has man/mpin.1 "Fl -$o( |$|,)" || fail "mpin.1: option --$o is not documented"; done
for s in $mpin_subcommands; do
    grep -E '^\.(.* )?(Ic|Cm) ' man/mpin.1 | grep -qw -- "$s" || fail "mpin.1: subcommand $s is not documented"
done
for o in $(grep -v -- "mpinctl\|mpin-server" man/mpin.1 | grep -ohE 'Fl -[a-z0-9-]+' | awk '{print $2}' | sed 's/^-//' | sort -u); do
    grep -qx -- "$o" <<<"$mpin_options" || fail "mpin.1: documents --$o, which mpin does not accept"
done

# mpinctl's exit statuses (ExitStatus, which it shares with mpin, with 64 for usage errors).
statuses=$(grep -oE 'case [a-zA-Z]+ = [0-9]+' Sources/MPinCLI/ExitStatus.swift | awk '{print $4}')
[ -n "$statuses" ] || fail "could not read mpinctl's exit statuses from Sources/MPinCLI/ExitStatus.swift"
for n in $statuses 64; do
    sed -n '/^\.Sh EXIT STATUS/,/^\.Sh /p' man/mpinctl.8 | grep -qx "\.It $n" || fail "mpinctl.8: exit status $n is not documented"
done

# mpin-server's config.json keys and the files of its data directory.
for k in $(grep -oE 'public var [a-zA-Z0-9]+' Sources/MPinServer/Server/ServerConfig.swift | awk '{print $3}'); do
    has man/mpin-server.8 "^\.It Li ([a-zA-Z0-9]+ , )*$k( |$)" || fail "mpin-server.8: config.json key $k is not documented"
done
for f in $(grep -oE 'path \+ "/[a-z0-9.]+"' Sources/MPinServer/Server/DataDirectory.swift | grep -oE '/[a-z0-9.]+' | tr -d /) \
         dta1.share dta2.share; do
    has man/mpin-server.8 "^\.It Pa ([a-z0-9.]+ , )*$f( |$)" || fail "mpin-server.8: data file $f is not documented"
done

if [ "$failures" -gt 0 ]; then echo "test-man: $failures failure(s)" >&2; exit 1; fi
echo "test-man: $(echo $PAGES | wc -w) pages render without warnings and document every option, key and code"
