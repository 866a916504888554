// libFuzzer entry for HTTPRequestParser, linked with the HTTPParsing target's sources built as a
// library (see fuzz/run.sh); not part of the Swift package.
//
// Input layout: byte 0 picks the parser limits, byte 1 the read-piece size; the rest is the
// connection's byte stream. Each input is parsed twice — all at once and in pieces the way a
// connection feeds it (unconsumed bytes kept, new bytes appended) — and the run traps when:
//   - a call consumes more than it was given, or returns no event without consuming everything;
//   - a body range lies outside the buffer passed in;
//   - a Content-Length body does not add up to its length before `.end`;
//   - the two runs disagree (framing must not depend on how reads split the stream);
//   - anything in the head (headers, target splitting, percent-decoding, Range and If-Range)
//     crashes, or a byte range falls outside the file or is empty.

@testable import HTTPParsing

/// One parser event, flattened so that runs can be compared.
enum FlatEvent: Equatable {
    case head(
        method: String, target: String, major: Int, minor: Int, framing: HTTPBodyFraming,
        keepAlive: Bool, expectsContinue: Bool, fields: [String])
    case body([UInt8])
    case end
    case error(HTTPParseError)
}

let limitChoices: [HTTPParserLimits] = [
    HTTPParserLimits(),
    HTTPParserLimits(maxRequestLineBytes: 32, maxHeaderBytes: 64, maxHeaderFields: 3, maxChunkLineBytes: 8),
    HTTPParserLimits(maxRequestLineBytes: 16, maxHeaderBytes: 24, maxHeaderFields: 1, maxChunkLineBytes: 3),
    HTTPParserLimits(maxRequestLineBytes: 1, maxHeaderBytes: 1, maxHeaderFields: 0, maxChunkLineBytes: 1),
]

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("fuzz invariant: \(message())") }
}

/// Exercises everything a handler could touch in a head; traps only through the code under test.
func touch(_ head: HTTPRequestHead) -> [String] {
    var fields: [String] = []
    for (index, field) in head.headers.enumerated() {
        fields.append(field.name + ":" + field.value)
        check(head.headers.contains(field.name), "field \(index) not found by its own name")
        _ = head.headers.values(for: field.name)
    }
    _ = head.headers["content-length"]
    var copy = head.headers
    copy.add(name: "X-Added", value: "v\r\n")
    if !head.headers.isEmpty { copy.remove(name: head.headers.name(at: 0)) }
    var serialized: [UInt8] = []
    copy.serialize(into: &serialized)
    for length in [0, 1, 500, 1 << 40] {
        checkRanges(head, length: length)
    }
    let (path, query) = RequestTarget.split(head.target)
    _ = RequestTarget.percentDecode(path)
    if let query { _ = RequestTarget.queryItems(query) }
    return fields
}

/// `Range`/`If-Range` of `head` on a `length`-byte file: a part lies inside the file and is not
/// empty, and HEAD always gets the whole file.
func checkRanges(_ head: HTTPRequestHead, length: Int) {
    let etag = "\"p-fuzz\""
    switch ByteRanges.answer(method: head.method, headers: head.headers, length: length, etag: etag) {
    case .part(let bytes):
        check(!bytes.isEmpty && bytes.lowerBound >= 0 && bytes.upperBound <= length, "range \(bytes) of \(length)")
    case .unsatisfiable, .whole: break
    }
    let asHead = ByteRanges.answer(method: .HEAD, headers: head.headers, length: length, etag: etag)
    check(asHead == .whole, "HEAD got \(asHead)")
    for value in head.headers.values(for: "Range") {
        if case .part(let bytes) = ByteRanges.answer(range: value, length: length) {
            check(!bytes.isEmpty && bytes.upperBound <= length, "range \(bytes) of \(length) from \(value)")
        }
    }
}

/// Parses `stream` fed in pieces of `pieceSize` bytes (0 = all at once).
func run(_ stream: UnsafeBufferPointer<UInt8>, limits: HTTPParserLimits, pieceSize: Int) -> [FlatEvent] {
    var parser = HTTPRequestParser(limits: limits)
    var events: [FlatEvent] = []
    var pending: [UInt8] = []
    var offset = 0
    var expectedBody: Int?
    var bodySeen = 0
    func record(_ event: FlatEvent) {
        if case .body(let more) = event, case .body(let previous)? = events.last {
            events[events.count - 1] = .body(previous + more)
        } else {
            events.append(event)
        }
    }
    while true {
        if offset < stream.count {
            let end = pieceSize == 0 ? stream.count : min(stream.count, offset + pieceSize)
            pending.append(contentsOf: stream[offset..<end])
            offset = end
        }
        while true {
            let available = pending.count
            let (consumed, event) = pending.withUnsafeBytes { raw -> (Int, FlatEvent?) in
                let (consumed, event) = parser.parse(raw)
                check(consumed >= 0 && consumed <= raw.count, "consumed \(consumed) of \(raw.count)")
                guard let event else {
                    check(consumed == raw.count, "no event but \(raw.count - consumed) bytes left")
                    return (consumed, nil)
                }
                switch event {
                case .head:
                    guard let head = parser.takeHead() else {
                        check(false, "a .head event without a head to take")
                        return (consumed, nil)
                    }
                    if case .contentLength(let length) = head.framing {
                        check(length > 0, "Content-Length framing of \(length)")
                        expectedBody = length
                    } else {
                        expectedBody = nil
                    }
                    bodySeen = 0
                    return (
                        consumed,
                        .head(
                            method: head.method.rawValue, target: head.target,
                            major: head.version.major, minor: head.version.minor,
                            framing: head.framing, keepAlive: head.keepAlive,
                            expectsContinue: head.expectsContinue, fields: touch(head))
                    )
                case .body(let range):
                    check(
                        range.lowerBound >= 0 && range.upperBound <= consumed && !range.isEmpty,
                        "body range \(range) with \(consumed) consumed of \(raw.count)")
                    bodySeen += range.count
                    if let expectedBody { check(bodySeen <= expectedBody, "body longer than Content-Length") }
                    return (consumed, .body(Array(raw[range])))
                case .end:
                    if let expectedBody { check(bodySeen == expectedBody, "body \(bodySeen) != \(expectedBody)") }
                    return (consumed, .end)
                case .error(let error):
                    check([400, 414, 417, 431, 501, 505].contains(error.statusCode), "status \(error.statusCode)")
                    return (consumed, .error(error))
                }
            }
            check(consumed <= available, "consumed past the buffer")
            pending.removeFirst(consumed)
            guard let event else { break }
            record(event)
            if case .error = event {
                check(parser.hasFailed, "error without the failed state")
                return events
            }
        }
        if offset >= stream.count { return events }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size >= 2 else { return 0 }
    let limits = limitChoices[Int(data[0]) % limitChoices.count]
    let pieceSize = 1 + Int(data[1]) % 17
    let stream = UnsafeBufferPointer(start: data + 2, count: size - 2)
    let whole = run(stream, limits: limits, pieceSize: 0)
    let pieces = run(stream, limits: limits, pieceSize: pieceSize)
    check(whole == pieces, "events differ between whole and \(pieceSize)-byte reads:\n\(whole)\n\(pieces)")
    return 0
}
