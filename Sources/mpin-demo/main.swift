import Foundation
import MPinCrypto

// `make demo` (crypto layer): the M-Pin protocol end to end in one process, with the roles
// named. Secrets are never printed; only public values (prefixes) and verdicts.

/// Secrets are described by their size only.
func short(_ bytes: [UInt8]) -> String { "(\(bytes.count) bytes, not shown)" }

func run() throws {
    let identity = #"{"userID": "alice@example.org", "mobile": 0, "issued": "2026-11-22T06:00:00Z", "salt": "c0ffee"}"#
    let mpinID = Array(identity.utf8)
    let today = Int32(Date().timeIntervalSince1970 / 86400)

    print("1. Two D-TAs each draw a master-secret share; neither ever sees the other's.")
    let share1 = try MPin.randomMasterSecret(), share2 = try MPin.randomMasterSecret()

    let serverSecret = try MPin.recombineG2(MPin.serverSecret(masterSecret: share1), MPin.serverSecret(masterSecret: share2))
    print("2. The authentication server gets s·Q from both and adds them: server secret \(short(serverSecret)).")

    print("3. Registration: the client gets a client-secret share from each D-TA and adds them.")
    let hashedID = MPin.hashID(mpinID)
    let clientSecret = try MPin.recombineG1(MPin.clientSecret(masterSecret: share1, hashedID: hashedID),
                                            MPin.clientSecret(masterSecret: share2, hashedID: hashedID))
    let pin = MPin.sdkPINValue(Array("1234".utf8))
    let token = try MPin.extractPIN(mpinID: mpinID, pin: pin, clientSecret: clientSecret)
    print("   PIN 1234 is folded out of the secret; the device keeps only the token \(short(token)).")

    print("4. Today's time permit (day \(today)) from both D-TAs.")
    let permit = try MPin.recombineG1(MPin.timePermit(date: today, masterSecret: share1, hashedID: hashedID),
                                      MPin.timePermit(date: today, masterSecret: share2, hashedID: hashedID))

    for (label, typed) in [("right PIN 1234", "1234"), ("wrong PIN 1243", "1243")] {
        let x = try SystemRandom.scalar()
        let pass1 = try MPin.client1(date: today, mpinID: mpinID, x: x, pin: MPin.sdkPINValue(Array(typed.utf8)),
                                     token: token, timePermit: permit)
        let (hid, htid) = try MPin.server1(date: today, mpinID: mpinID)
        let y = try SystemRandom.scalar()
        let v = try MPin.client2(x: x, y: y, sec: pass1.sec)
        let verdict = MPin.server2(date: today, hid: hid, htid: htid, y: y, serverSecret: serverSecret,
                                   u: pass1.u, ut: pass1.ut, v: v)
        print("5. Login with the \(label): client sends U, UT; server answers y; client sends V; server says \(verdict).")
    }
    print("""

    What happened: the PIN never left the client, and the server holds nothing from which it could
    be recovered. `make test` checks all of this against Apache Milagro's own test vectors.
    The server, client library, PAM module and admin CLI build on this layer (see README.md).
    """)
}

do { try run() } catch {
    FileHandle.standardError.write(Data("mpin-demo: \(error)\n".utf8))
    exit(1)
}
