// libFuzzer harness `server`: the server's request handling, every route, in process. Built
// only by `make fuzz` (Package.swift declares it when MPIN_FUZZ is set). Each input becomes
// one HTTP request (layout: FuzzRequest) sent through the router `mpin-server serve` would
// serve, over a real SQLite data directory; `ServerInvariants` says what every response must
// satisfy. A broken invariant is a crash (fatalError), so libFuzzer saves the input.
//
// The server keeps its state between inputs (users registered, access numbers issued), as a
// running server would: an input that fails may need the ones before it. libFuzzer's
// -runs/-seed replay of a whole corpus reproduces such a run.

import Dispatch
import Foundation
import Hummingbird
import MPinServer
import NIOEmbedded

/// libFuzzer's driver, which its own `main` would call (see Sources/MPinFuzz/Harnesses.swift).
@_extern(c, "LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<Int32>,
                     _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                     _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

/// What a blocking wait hands back from a task.
final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}

/// Runs `work` on the concurrency pool and waits for it on this thread: libFuzzer calls the
/// harness synchronously, the server's handlers are async.
func runBlocking<T>(_ work: @escaping @Sendable () async -> T) -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        box.value = await work()
        done.signal()
    }
    done.wait()
    return box.value!
}

/// Set once before the driver starts; libFuzzer runs inputs on one thread.
nonisolated(unsafe) var server: InProcessServer!
let logs = LogCapture()

@main
enum FuzzServerMain {
    static func main() {
        let channel = EmbeddedChannel()
        let started = runBlocking { () -> Result<InProcessServer, any Error> in
            do { return .success(try await InProcessServer(logs: logs, channel: channel)) } catch { return .failure(error) }
        }
        switch started {
        case .success(let s): server = s
        case .failure(let error):
            print("mpin-fuzz-server: cannot set up the server: \(error)")
            exit(2)
        }
        atexit { server?.removeDataDirectory() }
        ServerInvariants.checkRouteTable()
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(runFuzzerDriver(&argc, &argv, { data, size in
            let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
            if let input = FuzzRequest(bytes, clientID: server.clientID) { ServerInvariants.run(input) }
            return 0
        }))
    }
}
