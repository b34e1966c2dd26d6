import Synchronization

/// Values appended from any thread (a `@Sendable` callback such as a login's trace), read
/// back by the test in order.
package final class Collected<Element: Sendable>: Sendable {
    private let elements = Mutex<[Element]>([])

    package init() {}

    package func append(_ element: Element) { elements.withLock { $0.append(element) } }

    /// Everything appended so far, in order.
    package var all: [Element] { elements.withLock { $0 } }
}
