import Synchronization

/// Values appended from any thread (a `@Sendable` callback such as a login's trace), read
/// back by the test in order.
public final class Collected<Element: Sendable>: Sendable {
    private let elements = Mutex<[Element]>([])

    public init() {}

    public func append(_ element: Element) { elements.withLock { $0.append(element) } }

    /// Everything appended so far, in order.
    public var all: [Element] { elements.withLock { $0 } }
}
