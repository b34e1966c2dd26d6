import HummingbirdCore
import Logging
import NIOCore

/// A task executor that runs every job on one NIO event loop.
///
/// Hummingbird runs each connection as a task on the global concurrency pool, so every request
/// crossed threads twice: the event loop read it and woke a pool thread, which answered and woke
/// the event loop again to write. A connection's task preferring its own event loop (SE-0417)
/// reads, handles and writes on one thread: a resumption enqueued from that loop is a queue
/// append, not a thread wake-up. Nothing a handler awaits blocks the loop: it never waits on an
/// event loop's future (`wait()`), SQLite's transactions run on GRDB's own threads (its async
/// API; a write may wait for another process's lock) and PostgreSQL's on its connections' event
/// loops, and the handler resumes on this loop when they finish.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// A Hummingbird child channel whose connection task runs on the connection's event loop
/// (`EventLoopTaskExecutor`); set-up and everything else is `Base`'s. Child tasks the handler
/// starts inherit the preference, unstructured ones (`Task {}`) do not.
struct EventLoopBoundChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        base.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await withTaskExecutorPreference(EventLoopTaskExecutor(value.channel.eventLoop)) {
            await base.handle(value: value, logger: logger)
        }
    }
}

extension EventLoopBoundChannel: HTTPChannelHandler where Base: HTTPChannelHandler {
    var responder: HTTPChannelHandler.Responder { base.responder }
}

extension HTTPServerBuilder {
    /// Plain HTTP/1.1, each connection handled on its event loop, under `table`'s cap and
    /// deadlines (`GuardedChannel`).
    static func http1OnEventLoop(_ table: ConnectionTable) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            EventLoopBoundChannel(base: GuardedChannel(base: HTTP1Channel(responder: responder, configuration: .init()),
                                                       table: table))
        }
    }
}
