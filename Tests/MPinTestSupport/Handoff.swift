/// A value that is not `Sendable` (an `MPinSDK` or `MPinMFA` and its users, which are used from
/// one thread at a time), passed between a test's task and the thread its `blocking` helper
/// runs client calls on.
///
/// `@unchecked Sendable`, and true where the tests use it: the test awaits each `blocking` call
/// before it touches the value again, and starts no second call meanwhile, so the value is
/// used by one thread at a time and each hand-over is ordered by the call's completion.
package final class Handoff<Value>: @unchecked Sendable {
    package let value: Value

    package init(_ value: Value) { self.value = value }
}
