// Test helper: CurlHTTPTransport keeps working across fork(), as in sshd's privilege-separated
// children. The parent makes a request (libcurl and OpenSSL now initialised, the connection
// kept), forks, the child makes one with the same transport (it must open its own connection),
// then the parent again (on its kept connection).
//   mpin-fork-check URL
// Exit 0 when all three got status 200; another code names the step that failed.

#if canImport(Glibc)
import Glibc
#endif
import MPinClient
import MPinLinux

let transport = CurlHTTPTransport(configuration: .init(timeout: .seconds(5)))

func fetchSucceeds(_ url: String) -> Bool {
    guard let response = try? transport.send(HTTPRequest(method: .get, url: url)) else { return false }
    return response.status == 200
}

guard CommandLine.arguments.count == 2 else { exit(2) }
let url = CommandLine.arguments[1]
guard fetchSucceeds(url) else { exit(3) }
let child = fork()
if child == 0 { _exit(fetchSucceeds(url) ? 0 : 4) }
guard child > 0 else { exit(5) }
var status: Int32 = 0
while waitpid(child, &status, 0) < 0 {
    guard errno == EINTR else { exit(6) }
}
// A zero wait status means the child exited normally with code 0.
guard status == 0 else { exit(7) }
exit(fetchSucceeds(url) ? 0 : 8)
