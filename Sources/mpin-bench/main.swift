import Foundation
import MPinCrypto

// `make bench`: one line per operation, "NAME MICROSECONDS" (median over several rounds,
// each round averaging a batch of calls). Release build only; timing goals live here, not in tests.

/// The clock: wall time, or with MPIN_BENCH_CLOCK=cpu this thread's CPU time, which a busy
/// shared machine disturbs far less (time spent waiting for a core is not counted);
/// `make bench-mcl` uses it on both sides of its comparison.
let clock = ProcessInfo.processInfo.environment["MPIN_BENCH_CLOCK"] == "cpu" ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC

func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(clock, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Median microseconds per call of `body` over `rounds` rounds of `batch` calls. Never inlined,
/// so that Tests/ConstantTime/instruction-counts.sh can count the instructions inside it.
@MainActor @inline(never) func measure(_ name: String, rounds: Int = 7, batch: Int, _ body: () throws -> Void) rethrows {
    var samples = [Double]()
    try body() // warm-up: lazily initialised constants, caches
    for _ in 0..<rounds {
        let start = now()
        for _ in 0..<batch { try body() }
        samples.append(Double(now() - start) / 1000.0 / Double(batch))
    }
    samples.sort()
    print(name, Int(samples[samples.count / 2].rounded()))
}

/// Keeps results alive so the optimiser cannot drop the work.
nonisolated(unsafe) var sink = 0
func consume(_ bytes: [UInt8]) { sink &+= Int(bytes.last ?? 0) }

let only = Set(CommandLine.arguments.dropFirst())
func wanted(_ name: String) -> Bool { only.isEmpty || only.contains(name) }

let ms1 = try MPin.randomMasterSecret()
let ms2 = try MPin.randomMasterSecret()
let mpinID = Array(#"{"mobile": 1, "issued": "2026-11-22T06:00:00Z", "userID": "bench@example.org", "salt": "00112233"}"#.utf8)
let hashedID = MPin.hashID(mpinID)
let date: Int32 = 20414
let pin: Int32 = 4321
let cs = try MPin.recombineG1(MPin.clientSecret(masterSecret: ms1, hashedID: hashedID),
                              MPin.clientSecret(masterSecret: ms2, hashedID: hashedID))
let tp = try MPin.recombineG1(MPin.timePermit(date: date, masterSecret: ms1, hashedID: hashedID),
                              MPin.timePermit(date: date, masterSecret: ms2, hashedID: hashedID))
let ssBytes = try MPin.recombineG2(MPin.serverSecret(masterSecret: ms1), MPin.serverSecret(masterSecret: ms2))
let ss = try G2Point(bytes: ssBytes)
let token = try MPin.extractPIN(mpinID: mpinID, pin: pin, clientSecret: cs)
let x = try SystemRandom.scalar()
let y = try SystemRandom.scalar()
let k = UInt256(bigEndian: try SystemRandom.scalar())!
let pass1 = try MPin.client1(date: date, mpinID: mpinID, x: x, pin: pin, token: token, timePermit: tp)
let v = try MPin.client2(x: x, y: y, sec: pass1.sec)
let server = try MPin.server1(date: date, mpinID: mpinID)
guard MPin.server2(date: date, hid: server.hid, htid: server.htid, y: y, serverSecret: ss,
                   u: pass1.u, ut: pass1.ut, v: v) == .ok else {
    FileHandle.standardError.write(Data("mpin-bench: the benchmark flow does not verify\n".utf8))
    exit(1)
}

if wanted("g1_mul") { try measure("g1_mul", batch: 50) { consume(try G1Point.generator.multiplied(by: k).encoded()) } }
// G2 multiplication of the generator as serverSecret and DVS key pairs do it (fixed-base
// tables). By name only: `g2_mul_point`, the ψ split for any point of G2 (not using the
// generator's tables), and `g2_mul_any`, the generic method for any point of the twist.
if wanted("g2_mul") { try measure("g2_mul", batch: 20) { consume(try G2Point.generatorMultiple(k).encoded()) } }
if only.contains("g2_mul_point") {
    try measure("g2_mul_point", batch: 20) { consume(try ss.multipliedInG2(by: k).encoded()) }
}
if only.contains("g2_mul_any") {
    try measure("g2_mul_any", batch: 20) { consume(try G2Point.generator.multiplied(by: k).encoded()) }
}
if wanted("pairing") { try measure("pairing", batch: 10) { consume(Pairing.pairing(.generator, .generator).bytes) } }
if wanted("double_pairing") {
    try measure("double_pairing", batch: 10) { consume(Pairing.doublePairing(.generator, .generator, ss, .generator).bytes) }
}
if wanted("hash_to_g1") { try measure("hash_to_g1", batch: 200) { consume(try MPin.identityPoint(mpinID: mpinID).encoded()) } }
if wanted("extract_pin") {
    try measure("extract_pin", batch: 100) { consume(try MPin.extractPIN(mpinID: mpinID, pin: pin, clientSecret: cs)) }
}
if wanted("client_pass1") {
    try measure("client_pass1", batch: 50) {
        consume(try MPin.client1(date: date, mpinID: mpinID, x: x, pin: pin, token: token, timePermit: tp).sec)
    }
}
if wanted("client_pass2") { try measure("client_pass2", batch: 50) { consume(try MPin.client2(x: x, y: y, sec: pass1.sec)) } }
// As the server runs it: the server secret's Miller-loop lines prepared once at start-up.
let preparedSS = PreparedG2(ss)
if wanted("server_pass2") {
    try measure("server_pass2", batch: 10) {
        let r = MPin.server2(date: date, hid: server.hid, htid: server.htid, y: y, serverSecret: preparedSS,
                             u: pass1.u, ut: pass1.ut, v: v)
        sink &+= Int(r.rawValue)
    }
}
if wanted("time_permit") {
    try measure("time_permit", batch: 50) { consume(try MPin.timePermit(date: date, masterSecret: ms1, hashedID: hashedID)) }
}
// DVS: signing as the client does it (fresh x), verifying as a server that keeps the user's
// decoded public key (Pa's lines prepared once) and its own prepared server secret.
let (dvsZ, dvsKey) = try DVS.generateKeyPair()
let dvsIdentity = DVS.signingIdentity(mpinID: mpinID, publicKey: dvsKey)
let dvsHashed = MPin.hashID(dvsIdentity)
let dvsCS = try MPin.recombineG1(MPin.clientSecret(masterSecret: ms1, hashedID: dvsHashed),
                                 MPin.clientSecret(masterSecret: ms2, hashedID: dvsHashed))
let dvsToken = try DVS.extractToken(signingIdentity: dvsIdentity, pin: pin,
                                    keyedClientSecret: DVS.keyedClientSecret(clientSecret: dvsCS, secretKey: dvsZ))
let document = MPin.hashID(Array("transfer 100 EUR to account 12345".utf8))
let dvsSignature = try DVS.sign(signingIdentity: dvsIdentity, pin: pin, token: dvsToken, message: document,
                                timeValue: 1_800_000_000)
guard DVS.verify(dvsSignature, message: document, mpinID: mpinID, publicKey: dvsKey, serverSecret: preparedSS) else {
    FileHandle.standardError.write(Data("mpin-bench: the DVS signature does not verify\n".utf8))
    exit(1)
}
if wanted("dvs_sign") {
    try measure("dvs_sign", batch: 50) {
        consume(try DVS.sign(signingIdentity: dvsIdentity, pin: pin, token: dvsToken, message: document,
                             timeValue: 1_800_000_000).v)
    }
}
if wanted("dvs_verify") {
    measure("dvs_verify", batch: 10) {
        let ok = DVS.verify(dvsSignature, message: document, mpinID: mpinID, publicKey: dvsKey, serverSecret: preparedSS)
        sink &+= ok ? 1 : 0
    }
}
// Decoding and validating a 128-byte Pa (subgroup check, lines prepared), by name only.
if only.contains("dvs_key_decode") {
    try measure("dvs_key_decode", batch: 10) { consume(try DVSPublicKey(bytes: dvsKey.bytes).bytes) }
}
// Constant-time evidence (`make ct-check`, docs/CRYPTO.md §11): the same multiplications with
// scalars of Hamming weight 1 and 253 (1 and 2^253 − 1, both below r, so reduction mod r
// keeps them). A method that skipped zero digits or branched on bits would show the gap here;
// a constant-time one gives equal medians up to noise. For client pass 2 the scalar is
// k = −(x + y) mod r, so x is chosen to make k the low or the high value (y = 0).
let lowWeight = UInt256(1)
let highWeight = UInt256(.max, .max, .max, 0x1FFF_FFFF_FFFF_FFFF)
/// `name`_hw_low then `name`_hw_high, one right after the other so that both see the same load.
@MainActor func measureWeights(_ name: String, batch: Int, _ body: (UInt256) throws -> Void) rethrows {
    for (suffix, scalar) in [("_hw_low", lowWeight), ("_hw_high", highWeight)] where wanted(name + suffix) {
        try measure(name + suffix, batch: batch) { try body(scalar) }
    }
}
try measureWeights("g1_mul", batch: 50) { consume(try G1Point.generator.multiplied(by: $0).encoded()) }
try measureWeights("g2_mul", batch: 20) { consume(try G2Point.generatorMultiple($0).encoded()) }
try measureWeights("g2_mul_point", batch: 20) { consume(try ss.multipliedInG2(by: $0).encoded()) }
let zeroY = [UInt8](repeating: 0, count: 32)
try measureWeights("client_pass2", batch: 50) { k in
    let xForK = (-Fr(k)).value.bigEndianBytes // −(x + 0) = k
    consume(try MPin.client2(x: xForK, y: zeroY, sec: pass1.sec))
}
if sink == 42 { print("") } // never true in practice; keeps `sink` observable

// Building blocks, printed only when asked for by name (`mpin-bench fp_mul ...`).
if only.contains("fp_mul") {
    var a = Fp(UInt256(bigEndian: x)!), b = Fp(UInt256(bigEndian: y)!)
    measure("fp_mul_x100", batch: 10_000) { for _ in 0..<100 { a = a * b } }
    measure("fp_add_x100", batch: 10_000) { for _ in 0..<100 { a = a + b } }
    sink &+= Int(a.value.w0 & 1)
}
if only.contains("fp12_mul") {
    var f = Pairing.pairing(.generator, .generator), g = f.squared
    measure("fp12_mul", batch: 10000) { f = f * g }
    measure("fp12_sqr", batch: 10000) { g = g.squared }
    measure("fp_inverse", batch: 1000) { _ = f.a.a.a.inverse }
    sink &+= Int(f.a.a.a.value.w0 & 1)
}
