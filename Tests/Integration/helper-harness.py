#!/usr/bin/env python3
"""Runs mpin-pam-helper as pam_mpin.so does, but with this process's environment, so that a
test can see inside the helper's process (LD_DEBUG=files: which libraries the login loads).

    helper-harness.py HELPER CALL USER ANSWER [ARGUMENT...]

CALL is `authenticate` or `account`; ANSWER is what every prompt gets (the PIN); the
arguments are the pam.d line's. Prints one line per frame the helper sends (`log PRIORITY
TEXT`, `converse STYLE TEXT`, `item TYPE`, `watchdog MS`), then `result CODE`, then the
helper's stderr; exits 0 if the helper kept to the protocol (Sources/CPAMProtocol).
"""
import os
import socket
import struct
import subprocess
import sys

PAM_USER, PAM_SERVICE, PAM_TTY, PAM_RHOST, PAM_AUTHTOK = 2, 1, 3, 4, 6
PROMPTS = (1, 2)  # PAM_PROMPT_ECHO_OFF, PAM_PROMPT_ECHO_ON


def frame(kind, payload):
    return kind + struct.pack(">I", len(payload)) + payload


def read_exactly(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def main():
    helper, call, user, answer = sys.argv[1:5]
    arguments = sys.argv[5:]
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    proc = subprocess.Popen([helper], stdin=theirs, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    theirs.close()
    items = {PAM_USER: user, PAM_SERVICE: "harness", PAM_TTY: "", PAM_RHOST: ""}
    # The call byte, the PAM flags (4 bytes big-endian, HARNESS_FLAGS or 0), the arguments.
    flags = int(os.environ.get("HARNESS_FLAGS", "0"), 0)
    start = (b"a" if call == "authenticate" else b"m") + struct.pack(">I", flags) \
        + b"".join(a.encode() + b"\0" for a in arguments)
    ours.sendall(frame(b"S", start))
    ok = True
    ours.settimeout(60)
    try:
        while True:
            kind, length = struct.unpack(">cI", read_exactly(ours, 5))
            payload = read_exactly(ours, length)
            if kind == b"L":
                print("log", payload[0], payload[1:].decode())
            elif kind == b"C":
                print("converse", payload[0], payload[1:].decode())
                if payload[0] in PROMPTS:
                    ours.sendall(frame(b"R", b"\0" + answer.encode()))
            elif kind == b"I":
                print("item", payload[0])
                value = items.get(payload[0])
                ours.sendall(frame(b"R", b"\1" if value is None else b"\0" + value.encode()))
            elif kind == b"W":
                print("watchdog", struct.unpack(">I", payload)[0])
            elif kind == b"E":
                print("result", payload[0])
                break
            else:
                print("unknown frame", kind)
                ok = False
                break
    except (EOFError, socket.timeout):
        print("no result")
        ok = False
    ours.close()
    _, err = proc.communicate(timeout=30)
    sys.stdout.write(err.decode(errors="replace"))
    sys.exit(0 if ok and proc.returncode == 0 else 1)


if __name__ == "__main__":
    main()
