import HTTPServer

// http-bench-server: serves every file of a directory from memory at `/<name>` through
// HTTPServer, for `make bench-http` (side by side with nginx serving the same files).
//
//   http-bench-server DIR [PORT] [THREADS] [BODIES]
//
// BODIES is `file` (the default: the payloads are kept in one unlinked tmpfs file and sent with
// sendfile, as Flipbook sends cached frames from its memory-file arena) or `memory` (each payload
// an [UInt8], copied into the socket).
#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    print("usage: http-bench-server DIR [PORT] [THREADS]")
    exit(2)
}
let directory = arguments[1]
var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: arguments.count > 2 ? Int(arguments[2]) ?? 8081 : 8081)
if arguments.count > 3, let threads = Int(arguments[3]) { configuration.eventLoopThreads = threads }
configuration.serverName = "flipbook-bench"

/// Reads a whole file into memory.
func readFile(_ path: String) -> [UInt8]? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&chunk, 1, chunk.count, file)
        if n <= 0 { break }
        bytes.append(contentsOf: chunk[0..<n])
    }
    return bytes
}

/// The names of the regular files in a directory.
func listDirectory(_ path: String) -> [String] {
    guard let dir = opendir(path) else { return [] }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if !name.hasPrefix(".") { names.append(name) }
    }
    return names.sorted()
}

let fileBodies = arguments.count > 4 ? arguments[4] != "memory" : true
/// The tmpfs file that holds every payload when they are sent with sendfile (unlinked: it lives
/// as long as the process).
let bodyFile: Int32 = {
    guard fileBodies else { return -1 }
    let path = "/dev/shm/http-bench-server.\(getpid())"
    let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard fd >= 0 else {
        print("http-bench-server: cannot create \(path)")
        exit(1)
    }
    unlink(path)
    return fd
}()
var bodyFileEnd = 0
var payloads: [String: HTTPResponse] = [:]
for name in listDirectory(directory) {
    guard let bytes = readFile(directory + "/" + name) else { continue }
    var headers = HTTPHeaders()
    headers.add(name: "Content-Type", value: name.hasSuffix(".png") ? "image/png" : "application/octet-stream")
    if fileBodies {
        let written = bytes.withUnsafeBytes { pwrite(bodyFile, $0.baseAddress, $0.count, off_t(bodyFileEnd)) }
        guard written == bytes.count else {
            print("http-bench-server: cannot write \(name) to the body file")
            exit(1)
        }
        let body = HTTPFileBody(descriptor: bodyFile, offset: bodyFileEnd, count: bytes.count, owner: nil)
        payloads["/" + name] = HTTPResponse(status: .ok, headers: headers, fileBody: body)
        bodyFileEnd += (bytes.count + 4095) & ~4095
    } else {
        payloads["/" + name] = HTTPResponse(status: .ok, headers: headers, body: bytes)
    }
}
let cache = payloads
var router = Router()
router.get("/:name") { request, _ in
    if let response = cache[request.path] { return .now(response) }
    return .now(.problem(.notFound, detail: "No payload \(request.path)."))
}
let server = HTTPServer(configuration: configuration, router: router)
do {
    try server.start()
} catch {
    print("http-bench-server: \(error)")
    exit(1)
}
print(
    "http-bench-server: \(cache.count) payloads on port \(server.port), \(configuration.eventLoopThreads) loops, "
        + (fileBodies ? "bodies sent with sendfile" : "bodies copied from memory"))
fflush(nil)
signal(SIGPIPE, SIG_IGN)
// A parent may have spawned us with signals blocked (Foundation's Process inherits the spawning
// thread's mask); unblock them so that SIGTERM/SIGINT stop the server.
var unblocked = sigset_t()
sigemptyset(&unblocked)
sigprocmask(SIG_SETMASK, &unblocked, nil)
// Serve until killed.
while true { pause() }
