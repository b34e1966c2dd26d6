import MPinWire

/// A request's form-encoded query string (`a=1&b=2`), decoded once. A name given twice
/// means its last value, as the original servers (Tornado's `get_argument`) read it.
package struct QueryParameters: Sendable {
    private let pairs: [(String, String)]

    /// nil when the query has a malformed `%` escape or is not UTF-8; an absent query has no parameters.
    package init?(_ query: String?) {
        guard let pairs = FormEncoding.decode(query ?? "") else { return nil }
        self.pairs = pairs
    }

    /// The last value of `name`, nil when absent.
    package subscript(name: String) -> String? { pairs.last { $0.0 == name }?.1 }

    /// Every pair in order, for parsers that read several fields (`ClientSecretParams`).
    var all: [(String, String)] { pairs }
}
