// libFuzzer harnesses for the parsers and decoders that read untrusted bytes. Built only by
// `make fuzz` (Package.swift declares this target when MPIN_FUZZ is set, so a plain
// `swift build` never compiles it): -sanitize=fuzzer links libFuzzer in, and `main` below
// hands libFuzzer's driver the harness callback. One binary holds every harness;
// MPIN_FUZZ_HARNESS names the one a run exercises. A broken round trip is a crash
// (fatalError), so libFuzzer saves the input like any other crash.

#if canImport(Glibc)
import Glibc
#endif
@testable import MPinLinux   // HTTPResponseReader is internal to MPinLinux.
import CPAMProtocol
import MPinCrypto
import MPinJSON
import MPinLogin
import MPinWire

/// The harnesses, by the name MPIN_FUZZ_HARNESS gives.
let harnesses: [String: @Sendable ([UInt8]) -> Void] = [
    "json": fuzzJSON,
    "wire": fuzzWire,
    "wiretext": fuzzWireText,
    "http": fuzzHTTPResponse,
    "g1": fuzzG1,
    "g2": fuzzG2,
    "scalar": fuzzScalar,
    "config": fuzzConfig,
    "module": fuzzModuleFrames,
]

/// Set once, before the first input; libFuzzer runs inputs on one thread.
nonisolated(unsafe) var selected: @Sendable ([UInt8]) -> Void = { _ in }

/// libFuzzer's driver, which its own `main` would call. SwiftPM gives an executable target an
/// entry point of its own naming, so the harness starts the driver from `@main`. A C function,
/// declared with the C calling convention (the Extern feature).
@_extern(c, "LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<Int32>,
                     _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                     _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

@main
enum FuzzMain {
    static func main() {
        guard let cName = getenv("MPIN_FUZZ_HARNESS"), let harness = harnesses[String(cString: cName)] else {
            print("set MPIN_FUZZ_HARNESS to one of: \(harnesses.keys.sorted().joined(separator: " "))")
            exit(2)
        }
        selected = harness
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(runFuzzerDriver(&argc, &argv, { data, size in
            selected(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)))
            return 0
        }))
    }
}

/// Stops the run with a message naming the broken property; libFuzzer keeps the input.
func check(_ condition: @autoclosure () -> Bool, _ what: String) {
    if !condition() { fatalError("round trip broken: \(what)") }
}

// MARK: MPinJSON

/// A type touching every decoding path of the Codable layer (nested containers, optionals,
/// integers of several widths, floating point).
struct JSONShape: Codable, Equatable {
    var s: String?
    var b: Bool?
    var i: Int?
    var u8: UInt8?
    var i64: Int64?
    var d: Double?
    var list: [String]?
    var nested: [JSONShape]?
    var map: [String: Int]?
}

/// Parse, serialise, parse: the second parse equals the first and serialising is stable.
/// Then the Codable decoders, strict and lenient, over the same document.
func fuzzJSON(_ bytes: [UInt8]) {
    guard let value = try? JSONParser().parse(bytes) else { return }
    let text = value.serialized
    guard let again = try? JSONParser().parse(text) else { fatalError("round trip broken: serialised JSON does not parse") }
    check(again == value, "JSON parse(serialise(v)) != v")
    check(again.serialized == text, "JSON serialisation not stable")
    if let shape = try? JSONDecoding.decode(JSONShape.self, from: value) {
        roundTrip(shape, "JSONShape")
    }
    if let shape = try? JSONDecoding.decodeLeniently(JSONShape.self, from: value) {
        // Double fields may hold non-finite values a lenient read produced; only encode finite ones.
        if shape.d.map({ $0.isFinite }) ?? true { _ = try? JSONEncoding.encode(shape) }
    }
    _ = try? JSONDecoding.decode([String: JSONValue].self, from: value)
    _ = try? JSONDecoding.decode([JSONValue].self, from: value)
}

/// encode(v) decodes strictly to v again.
func roundTrip<T: Codable & Equatable>(_ value: T, _ name: String) {
    guard let encoded = try? WireCoding.encode(value) else { return }
    guard let back = try? WireCoding.strict(T.self, from: encoded) else {
        fatalError("round trip broken: \(name) encodes to JSON that does not decode")
    }
    check(back == value, "\(name) decode(encode(v)) != v")
}

// MARK: MPinWire

/// Decodes one message type, strictly from the bytes and leniently from the parsed object,
/// and checks that what decodes survives encode then strict decode.
struct WireType: Sendable {
    let name: String
    let run: @Sendable ([UInt8], JSONValue?) -> Void

    init<T: Codable & Equatable & Sendable>(_ type: T.Type) {
        name = String(describing: type)
        let name = name
        run = { bytes, value in
            if let message = try? WireCoding.strict(T.self, from: bytes) { roundTrip(message, name) }
            if let value, let message = WireCoding.lenient(T.self, from: value) { roundTrip(message, name + " (lenient)") }
        }
    }
}

/// Every message of Messages.swift, SessionMessages.swift and DVSMessages.swift.
let wireTypes: [WireType] = [
    WireType(ClientSettings.self), WireType(RegisterRequest.self), WireType(RegisterResponse.self),
    WireType(ActivateRequest.self), WireType(SignatureResponse.self), WireType(ClientSecretResponse.self),
    WireType(ServerSecretResponse.self), WireType(TimePermitResponse.self), WireType(DTATimePermitResponse.self),
    WireType(Pass1Request.self), WireType(Pass1Response.self), WireType(Pass2Request.self),
    WireType(Pass2Response.self), WireType(MPinResponse.self), WireType(AuthenticateRequest.self),
    WireType(AuthenticateEnvelope<Pass2Response>.self), WireType(LogoutData.self),
    WireType(MobileAuthenticateResponse.self), WireType(TokenAuthenticateRequest.self),
    WireType(TokenAuthenticateResponse.self), WireType(RPAAuthenticateResponse.self), WireType(OTPTiming.self),
    WireType(AccessNumberResponse.self), WireType(AccessNumberPollRequest.self),
    WireType(AccessNumberPollResponse.self), WireType(StatusResponse.self), WireType(ErrorResponse.self),
    WireType(ServiceDetailsResponse.self), WireType(CodeStatusRequest.self), WireType(SessionDetailsResponse.self),
    WireType(AuthorizationCodeResponse.self), WireType(RegCodeResponse.self),
    WireType(DVSRegisterRequest.self), WireType(DVSRegisterResponse.self), WireType(DVSClientSecretResponse.self),
    WireType(DVSRegisterTokenResponse.self), WireType(DVSSignatureMessage.self), WireType(DVSVerifyResponse.self),
]

/// The first byte picks the message type; the rest is the JSON body.
func fuzzWire(_ bytes: [UInt8]) {
    guard let first = bytes.first else { return }
    let body = bytes.dropFirst()
    let value = try? JSONParser().parse(body)
    wireTypes[Int(first) % wireTypes.count].run(Array(body), value)
}

/// The text forms beside the JSON bodies: query strings (the D-TA's client-secret parameters),
/// hex, M-Pin IDs, the signature's expiry time, access numbers. Query strings and hex must
/// survive encode then decode.
func fuzzWireText(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    if let pairs = FormEncoding.decode(text) {
        let again = FormEncoding.decode(FormEncoding.encode(pairs))
        check(again.map { $0.map { "\($0.0)=\($0.1)" } } == pairs.map { "\($0.0)=\($0.1)" }, "form decode(encode(p)) != p")
        _ = try? ClientSecretParams(pairs: pairs)
    }
    if let raw = Hex.decode(text) {
        check(Hex.decode(Hex.encode(raw)) == raw, "hex decode(encode(b)) != b")
        _ = MPinIdentity.parse(raw)
    }
    _ = MPinIdentity.parse(bytes)
    _ = WireTime.parseSignatureExpires(text)
    _ = AccessNumber.isValid(text)
    _ = AccessNumber.sdkAccepts(text)
}

// MARK: HTTPResponseReader

/// The first byte sets the size of the pieces the reply arrives in (1...64 bytes, as a slow
/// or hostile server would deliver it), the second whether the connection then closes.
func fuzzHTTPResponse(_ bytes: [UInt8]) {
    guard bytes.count >= 2 else { return }
    let piece = Int(bytes[0] % 64) + 1
    let closes = bytes[1] & 1 == 1
    let reply = bytes[2...]
    var reader = HTTPResponseReader(limit: 1 << 16)
    var progress = HTTPResponseReader.Progress.needsMore
    var at = reply.startIndex
    while at < reply.endIndex, progress == .needsMore {
        let end = min(at + piece, reply.endIndex)
        progress = reader.receive(reply[at..<end])
        at = end
    }
    if progress == .needsMore, closes { progress = reader.receiveEnd() }
    if progress == .complete {
        check(reader.isComplete, "HTTP complete without isComplete")
        check((100...999).contains(reader.status), "HTTP status out of range")
        check(reader.body.count <= reply.count, "HTTP body longer than the reply")
    }
}

// MARK: MPinCrypto

/// 65-byte (uncompressed) and 33-byte (compressed) G1 encodings; what decodes re-encodes to
/// the same point.
func fuzzG1(_ bytes: [UInt8]) {
    if let p = try? G1Point(bytes: bytes) {
        check((try? p.encoded()) == bytes, "G1 encoded(decode(b)) != b")
    }
    if let p = try? G1Point(compressedBytes: bytes), let full = try? p.encoded() {
        check(full.count == 65 && Array(full[1..<33]) == Array(bytes.dropFirst()), "G1 compressed x changed")
        check(UInt8(full[64] & 1) == bytes[0] & 1, "G1 compressed parity changed")
        check((try? G1Point(bytes: full).encoded()) == full, "G1 decompressed point does not decode")
    }
}

/// 128-byte G2 encodings with the subgroup check, and the DVS public key on top of them.
func fuzzG2(_ bytes: [UInt8]) {
    if let q = try? G2Point(bytes: bytes) {
        check((try? q.encoded()) == bytes, "G2 encoded(decode(b)) != b")
    }
    if let key = try? DVSPublicKey(bytes: bytes) {
        check(key.bytes == bytes, "DVS key bytes changed")
        check((try? G2Point(bytes: bytes)) != nil, "DVS key accepted what G2 refuses")
    }
}

/// Scalars and field elements (32 bytes) and GT octets (384 bytes).
func fuzzScalar(_ bytes: [UInt8]) {
    if let r = Fr(canonicalBytes: bytes) { check(r.bytes == bytes, "Fr bytes(decode(b)) != b") }
    if let p = Fp(canonicalBytes: bytes) { check(p.bytes == bytes, "Fp bytes(decode(b)) != b") }
    if let n = UInt256(bigEndian: bytes) { check(n.bigEndianBytes == bytes, "UInt256 bytes(decode(b)) != b") }
    if let g = try? Fp12(bytes: bytes) { check(g.bytes == bytes, "Fp12 bytes(decode(b)) != b") }
}

// MARK: mpin.conf and module options

/// The first line is a pam.d module line's arguments, the rest mpin.conf.
func fuzzConfig(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    let (line, file): (Substring, Substring) = {
        guard let nl = text.firstIndex(of: "\n") else { return (text[...], "") }
        return (text[..<nl], text[text.index(after: nl)...])
    }()
    let options = ModuleOptions(arguments: line.split(separator: " ").map(String.init))
    _ = try? options.loadConfig(readFile: { _ throws(ConfigError) in String(file) })
    _ = try? LoginConfig.parse(String(file), file: "fuzz")
}

/// pam_mpin.so's frame parser (pam/Module/Frame.swift, the same file the Makefile compiles into
/// the module, linked here as ModuleFrame.swift): the bytes are what a helper sends, read frame
/// by frame as the module reads them (a short last frame is parsed as far as it goes). In the
/// module, a trap in this code would kill sshd's child; here it is a crash libFuzzer keeps.
/// Properties: a header is refused exactly when its length is over MPIN_PAM_MAX_PAYLOAD, and
/// each request the parser accepts has the payload length and the field ranges the protocol
/// gives its type.
func fuzzModuleFrames(_ bytes: [UInt8]) {
    let size = Int(MPIN_PAM_HEADER_SIZE)
    bytes.withUnsafeBytes { all in
        var at = 0
        while all.count - at >= size {
            let headerBytes = UnsafeRawBufferPointer(rebasing: all[at..<(at + size)])
            let declared = Int(headerBytes[1]) << 24 | Int(headerBytes[2]) << 16 | Int(headerBytes[3]) << 8 | Int(headerBytes[4])
            guard let header = FrameHeader(headerBytes) else {
                check(declared > Int(MPIN_PAM_MAX_PAYLOAD), "module: a header of length \(declared) refused")
                return
            }
            check(header.length == declared && header.type == headerBytes[0], "module: header fields")
            at += size
            let count = min(header.length, all.count - at)
            let payload = UnsafeRawBufferPointer(rebasing: all[at..<(at + count)])
            at += count
            guard let request = HelperRequest(type: header.type, payload: payload) else { continue }
            switch request {
            case .converse(let style):
                check(header.type == UInt8(MPIN_PAM_FRAME_CONVERSE) && count >= 1 && (PAM_PROMPT_ECHO_OFF...PAM_TEXT_INFO).contains(style),
                      "module: converse")
            case .getItem(let item):
                check(header.type == UInt8(MPIN_PAM_FRAME_GET_ITEM) && count == 1
                      && [PAM_USER, PAM_SERVICE, PAM_RHOST, PAM_TTY, PAM_AUTHTOK].contains(item), "module: item")
            case .log(let priority):
                check(header.type == UInt8(MPIN_PAM_FRAME_LOG) && count >= 1 && (0...LOG_DEBUG).contains(priority), "module: log")
            case .watchdog(let milliseconds):
                check(header.type == UInt8(MPIN_PAM_FRAME_WATCHDOG) && count == 4 && milliseconds <= UInt32(MPIN_PAM_MAX_WATCHDOG_MS),
                      "module: watchdog")
            case .result(let code):
                check(header.type == UInt8(MPIN_PAM_FRAME_RESULT) && count == 1 && code >= 0 && code < 256, "module: result")
            }
        }
    }
}
