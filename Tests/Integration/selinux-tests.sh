#!/usr/bin/env bash
# The SELinux policy module (packaging/selinux: mpin.te, mpin.fc, mpin.if), compiled as the
# package build compiles it (selinux-policy-dev's Makefile: m4, checkmodule, semodule_package),
# then linked into Debian's reference policy (selinux-policy-default: base plus the ssh, sudo, su
# and unconfined modules) and expanded into a kernel policy, which sesearch and seinfo (setools)
# question: sshd, sudo, su and login enter mpin_helper_t through the helper's executable only,
# the helper reads /etc/mpin, keeps /var/lib/mpin, reaches the backend and logs, and can do
# nothing else. A policy that gives the helper more is built too, and must be caught.
# The machine need not run SELinux, and in a container it cannot: the policy is checked, not
# enforced (said below). About 20 seconds. Needs selinux-policy-dev, selinux-policy-default,
# setools, checkpolicy and semodule-utils (make packages installs them).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRC="$ROOT/packaging/selinux"
DEVEL=/usr/share/selinux/devel/Makefile
REFPOLICY=/usr/share/selinux/default
failures=0
check() {
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; failures=$((failures + 1)); fi
}

for tool in make checkmodule semodule_package semodule_unpackage semodule_link semodule_expand sesearch seinfo; do
  command -v "$tool" >/dev/null || { echo "selinux-tests: $tool is missing (make packages installs it)"; exit 1; }
done
[ -f "$DEVEL" ] || { echo "selinux-tests: $DEVEL is missing (selinux-policy-dev)"; exit 1; }
[ -f "$REFPOLICY/base.pp.bz2" ] || { echo "selinux-tests: $REFPOLICY/base.pp.bz2 is missing (selinux-policy-default)"; exit 1; }

if command -v selinuxenabled >/dev/null && selinuxenabled; then
  echo "selinux-tests: SELinux is enabled here, but this suite only compiles and queries the policy; it loads nothing"
else
  echo "selinux-tests: SELinux is not enabled on this machine (a container cannot enable it): the policy is compiled and checked with sesearch, not enforced"
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# build DIR FILES...: the module's sources into DIR, compiled there to mpin.pp as the package build does.
build() {
  local dir=$1; shift
  mkdir -p "$dir" && cp "$@" "$dir/" && make -s -C "$dir" -f "$DEVEL" mpin.pp >"$dir/build.log" 2>&1
}
# link OUT PP...: the reference policy's base, the login programs' modules and the roles that
# instantiate sudo's and su's domains (staff_sudo_t, user_su_t, ...), plus PP..., as a kernel policy.
REFMODULES="base ssh sudo su unconfined staff unprivuser"
link() {
  local out=$1 m mods=(); shift
  for m in $REFMODULES; do
    [ -f "$WORK/$m.pp" ] || bunzip2 -c "$REFPOLICY/$m.pp.bz2" > "$WORK/$m.pp"
    mods+=("$WORK/$m.pp")
  done
  semodule_link -o "$out.lnk" "${mods[@]}" "$@" >/dev/null && semodule_expand "$out.lnk" "$out"
}
# rules ARGS...: sesearch's rules against the policy under test, one a line.
rules() { sesearch "$@" "$POLICY" 2>/dev/null | grep -v '^$'; }
# has_rule PATTERN ARGS...: some rule sesearch prints for ARGS matches the extended regex PATTERN.
has_rule() { local p=$1; shift; rules "$@" | grep -Eq -- "$p"; }
# no_rule ARGS...: sesearch finds nothing.
no_rule() { [ -z "$(rules "$@")" ]; }

# --- Compiling -----------------------------------------------------------------------------
check "mpin.pp compiles with selinux-policy-dev's Makefile" build "$WORK/mpin" "$SRC/mpin.te" "$SRC/mpin.fc" "$SRC/mpin.if"
[ -f "$WORK/mpin/mpin.pp" ] || { cat "$WORK/mpin/build.log"; exit 1; }
check "the package unpacks into a module and its file contexts" \
  bash -c "cd '$WORK/mpin' && semodule_unpackage mpin.pp mpin.mod mpin.pp.fc && [ -s mpin.mod ] && [ -s mpin.pp.fc ]"
fc_has() { grep -Eq "^$1[[:space:]].*:$2:s0" "$WORK/mpin/mpin.pp.fc"; }
check "file contexts: the helper is mpin_helper_exec_t" fc_has '/usr/libexec/mpin/mpin-pam-helper' mpin_helper_exec_t
check "file contexts: /etc/mpin is mpin_conf_t" fc_has '/etc/mpin\(/\.\*\)\?' mpin_conf_t
check "file contexts: /var/lib/mpin is mpin_var_lib_t" fc_has '/var/lib/mpin\(/\.\*\)\?' mpin_var_lib_t
check "file contexts: mpin-server and its data" bash -c "grep -q ':mpin_server_exec_t:' '$WORK/mpin/mpin.pp.fc' && grep -q ':mpin_server_var_lib_t:' '$WORK/mpin/mpin.pp.fc'"

# --- Linked into the reference policy ------------------------------------------------------
check "mpin.pp links into Debian's reference policy and expands" link "$WORK/policy.bin" "$WORK/mpin/mpin.pp"
POLICY=$WORK/policy.bin
[ -f "$POLICY" ] || exit 1

# Entering the helper's domain: from each PAM host, on the helper's executable, and only so.
check "sshd_t runs the helper in mpin_helper_t" has_rule 'type_transition sshd_t mpin_helper_exec_t:process mpin_helper_t' -T -s sshd_t -t mpin_helper_exec_t
check "sudo's domains (staff_sudo_t, user_sudo_t) run the helper in mpin_helper_t" \
  bash -c "for d in staff_sudo_t user_sudo_t; do sesearch -T -s \$d -t mpin_helper_exec_t '$POLICY' | grep -q 'mpin_helper_exec_t:process mpin_helper_t' || exit 1; done"
check "su's domain (staff_su_t) runs the helper in mpin_helper_t" \
  has_rule 'type_transition staff_su_t mpin_helper_exec_t:process mpin_helper_t' -T -s staff_su_t -t mpin_helper_exec_t
check "login (local_login_t) runs the helper in mpin_helper_t" \
  has_rule 'mpin_helper_exec_t:process mpin_helper_t' -T -s local_login_t -t mpin_helper_exec_t
check "staff_r, user_r and sysadm_r may hold mpin_helper_t (sudo and su run in them)" \
  bash -c "for r in staff_r user_r sysadm_r; do seinfo -x -r \$r '$POLICY' | grep -qw mpin_helper_t || exit 1; done"
check "mpin_helper_t is entered only through mpin_helper_exec_t" \
  bash -c "[ \"\$(sesearch -A -t mpin_helper_t -c process -p transition '$POLICY' | grep -c .)\" -ge 1 ] && [ \"\$(sesearch -A -s mpin_helper_t -c file -p entrypoint '$POLICY' | grep -v ' mpin_helper_exec_t:file ' | grep -c .)\" = 0 ]"
check "the helper uses the socket pair sshd made" has_rule 'allow mpin_helper_t sshd_t:unix_stream_socket .*(read|write)' -A -s mpin_helper_t -t sshd_t -c unix_stream_socket
check "sshd may stop the helper at the end of its budget" has_rule 'sigkill' -A -s sshd_t -t mpin_helper_t -c process -p sigkill

# What the helper may do.
check "the helper reads /etc/mpin" has_rule 'allow mpin_helper_t mpin_conf_t:file .*read' -A -s mpin_helper_t -t mpin_conf_t -c file -p read
check "the helper creates, writes and renames in /var/lib/mpin" \
  bash -c "sesearch -A -s mpin_helper_t -t mpin_var_lib_t -c file '$POLICY' | grep -E 'create' | grep -E 'write' | grep -q rename"
check "the helper locks the store's directory" has_rule 'lock' -A -s mpin_helper_t -t mpin_var_lib_t -c dir -p lock
check "the helper connects to http(s) ports" has_rule 'name_connect' -A -s mpin_helper_t -t http_port_t -c tcp_socket -p name_connect
check "the helper connects to a port labelled mpin_port_t" has_rule 'name_connect' -A -s mpin_helper_t -t mpin_port_t -c tcp_socket -p name_connect
check "file contexts: /run/mpin is mpin_runtime_t" fc_has '/run/mpin\(/\.\*\)\?' mpin_runtime_t
check "the helper makes and locks its memory-lock slots in /run/mpin" \
  bash -c "sesearch -A -s mpin_helper_t -t mpin_runtime_t -c file '$POLICY' | grep -q 'lock' && sesearch -A -s mpin_helper_t -t mpin_runtime_t -c dir '$POLICY' | grep -q create"
check "the helper logs to syslog" has_rule 'devlog_t' -A -s mpin_helper_t -t devlog_t -c sock_file -p write

# What it may not.
check "the helper cannot write its configuration" no_rule -A -s mpin_helper_t -t mpin_conf_t -c file -p write,append,create,unlink
check "the helper cannot read shadow" no_rule -A -s mpin_helper_t -t shadow_t
check "the helper cannot run another program" no_rule -A -s mpin_helper_t -t bin_t -c file -p execute,execute_no_trans
check "the helper enters no other domain" bash -c "[ -z \"\$(sesearch -A -s mpin_helper_t -c process -p transition,dyntransition '$POLICY' | grep -v '^\$')\" ] && [ -z \"\$(sesearch -T -s mpin_helper_t -c process '$POLICY' | grep -v '^\$')\" ]"
check "the helper listens on no port" no_rule -A -s mpin_helper_t -c tcp_socket -p name_bind
check "the helper cannot touch home directories" no_rule -A -s mpin_helper_t -t user_home_t
check "the helper cannot write etc_t files" no_rule -A -s mpin_helper_t -t etc_t -c file -p write,append,create
check "the helper's one capability is ipc_lock (its memory locked while a PIN is in it)" \
  bash -c "[ \"\$(sesearch -A -s mpin_helper_t -c capability '$POLICY' | grep -v '^\$')\" = 'allow mpin_helper_t mpin_helper_t:capability ipc_lock;' ]"

# The server's domain, from systemd.
check "init runs mpin-server in mpin_server_t" has_rule 'mpin_server_exec_t:process mpin_server_t' -T -t mpin_server_exec_t -c process
check "mpin-server manages /var/lib/mpin-server" has_rule 'create' -A -s mpin_server_t -t mpin_server_var_lib_t -c file -p create
check "mpin-server cannot read the helper's store" no_rule -A -s mpin_server_t -t mpin_var_lib_t

# --- A policy that gives the helper too much is caught -------------------------------------
# The same module with one rule more (the helper may run programs): the check above must fail.
mkdir -p "$WORK/wide-src"
sed 's/^logging_send_syslog_msg(mpin_helper_t)$/&\ncorecmd_exec_bin(mpin_helper_t)/' "$SRC/mpin.te" > "$WORK/wide-src/mpin.te"
check "a module that lets the helper run programs compiles" build "$WORK/wide" "$WORK/wide-src/mpin.te" "$SRC/mpin.fc" "$SRC/mpin.if"
check "and links" link "$WORK/wide.bin" "$WORK/wide/mpin.pp"
check "and is caught by the 'cannot run another program' check" bash -c "[ -n \"\$(sesearch -A -s mpin_helper_t -t bin_t -c file -p execute '$WORK/wide.bin')\" ]"

# --- RHEL 10's sshd_session_t --------------------------------------------------------------
# The reference policy has no sshd_session_t, so that optional block stays off above; a policy
# that declares it (here a one-type module) turns it on.
mkdir -p "$WORK/session"
cat > "$WORK/session/sshsession.te" <<'EOF'
policy_module(sshsession, 1.0.0)
type sshd_session_t;
domain_type(sshd_session_t)
role system_r types sshd_session_t;
EOF
: > "$WORK/session/sshsession.fc"
make -s -C "$WORK/session" -f "$DEVEL" sshsession.pp >/dev/null 2>&1
check "a policy that declares sshd_session_t links" link "$WORK/session.bin" "$WORK/session/sshsession.pp" "$WORK/mpin/mpin.pp"
check "and there sshd-session runs the helper in mpin_helper_t" \
  bash -c "sesearch -T -s sshd_session_t -t mpin_helper_exec_t '$WORK/session.bin' | grep -q 'type_transition sshd_session_t mpin_helper_exec_t:process mpin_helper_t'"
check "without it, no rule names sshd_session_t" bash -c "! seinfo -t sshd_session_t '$POLICY' 2>/dev/null | grep -q 'sshd_session_t\$'"

echo "selinux-tests: $failures failed"
[ "$failures" = 0 ]
