package import Hummingbird

extension WireBodyDecoder {
    /// Decodes the body as `T` when there is one; nil for an empty (or all-whitespace) body.
    package func decodeIfPresent<T: Decodable>(_ type: T.Type, from request: Request) async throws -> T? {
        var request = request
        let body = try await request.collectBody(upTo: maxBodyBytes)
        guard body.readableBytesView.contains(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }) else { return nil }
        return try await decode(type, from: request)
    }
}
