// Test helper for the HTTP transports, in a process of its own.
//
//   mpin-fork-check [--plain] URL
// The transport keeps working across fork(), as in sshd's privilege-separated children. The
// parent makes a request (libcurl and OpenSSL now loaded and initialised, the connection kept),
// forks, the child makes one with the same transport (it must open its own connection), then
// the parent again (on its kept connection). Exit 0 when all three got status 200; another code
// names the step that failed. CurlHTTPTransport by default, PlainHTTPTransport with --plain.
//
//   mpin-fork-check --without-libcurl URL
// With libcurl missing (a library name that does not exist is loaded instead), a request fails
// with a clear transport error instead of the process failing to start. Exit 0 when it does.

#if canImport(Glibc)
import Glibc
#endif
import CCurlShim
import MPinClient
import MPinLinux

var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--without-libcurl" {
    guard arguments.count == 2 else { exit(2) }
    mpin_curl_use_library("libcurl-missing-for-test.so.4")
    do {
        _ = try CurlHTTPTransport().send(HTTPRequest(method: .get, url: arguments[1]))
        exit(10)
    } catch {
        print(error.description)
        exit(error.description.contains("could not be loaded") ? 0 : 11)
    }
}

let plain = arguments.first == "--plain"
if plain { arguments.removeFirst() }
let transport: any HTTPTransport = plain ? PlainHTTPTransport(configuration: .init(timeout: .seconds(5)))
    : CurlHTTPTransport(configuration: .init(timeout: .seconds(5)))

func fetchSucceeds(_ url: String) -> Bool {
    guard let response = try? transport.send(HTTPRequest(method: .get, url: url)) else { return false }
    return response.status == 200
}

guard arguments.count == 1 else { exit(2) }
let url = arguments[0]
guard fetchSucceeds(url) else { exit(3) }
let child = fork()
if child == 0 { _exit(fetchSucceeds(url) ? 0 : 4) }
guard child > 0 else { exit(5) }
var status: Int32 = 0
guard (try? retryingOnInterrupt({ waitpid(child, &status, 0) })) != nil else { exit(6) }
// A zero wait status means the child exited normally with code 0.
guard status == 0 else { exit(7) }
exit(fetchSucceeds(url) ? 0 : 8)
