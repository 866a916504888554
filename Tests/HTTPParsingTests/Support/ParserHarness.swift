@testable import HTTPParsing

/// A parser event flattened to something tests can compare.
enum ParsedEvent: Equatable, CustomStringConvertible {
    case head(
        method: String, target: String, version: String, framing: HTTPBodyFraming, keepAlive: Bool,
        expectsContinue: Bool, headers: [String])
    case body([UInt8])
    case end
    case error(HTTPParseError)

    var description: String {
        switch self {
        case .head(let method, let target, let version, let framing, let keepAlive, let expects, let headers):
            return "head(\(method) \(target) \(version) \(framing) keepAlive=\(keepAlive) continue=\(expects) \(headers))"
        case .body(let bytes): return "body(\(String(decoding: bytes, as: UTF8.self)))"
        case .end: return "end"
        case .error(let error): return "error(\(error))"
        }
    }
}

/// Feeds `input` to a fresh parser in pieces of `pieceSizes` (cycled; whole input when empty),
/// the way a connection does (unconsumed bytes stay and new bytes are appended), and returns
/// the events with adjacent body pieces merged.
func parseEvents(_ input: [UInt8], limits: HTTPParserLimits = HTTPParserLimits(), pieceSizes: [Int] = []) -> [ParsedEvent] {
    var parser = HTTPRequestParser(limits: limits)
    var events: [ParsedEvent] = []
    var pending: [UInt8] = []
    var offset = 0
    var piece = 0
    func record(_ event: ParsedEvent) {
        if case .body(let more) = event, case .body(let previous)? = events.last {
            events[events.count - 1] = .body(previous + more)
        } else {
            events.append(event)
        }
    }
    while true {
        if offset < input.count {
            let size = pieceSizes.isEmpty ? input.count : max(1, pieceSizes[piece % pieceSizes.count])
            piece += 1
            let end = min(input.count, offset + size)
            pending.append(contentsOf: input[offset..<end])
            offset = end
        }
        // Drain the parser on what is pending.
        while true {
            let (consumed, event) = pending.withUnsafeBytes { raw -> (Int, ParsedEvent?) in
                let (consumed, event) = parser.parse(raw)
                guard let event else { return (consumed, nil) }
                switch event {
                case .head:
                    guard let head = parser.takeHead() else { return (consumed, .error(.malformedRequestLine)) }
                    let headers = head.headers.map { "\($0.name): \($0.value)" }
                    return (
                        consumed,
                        .head(
                            method: head.method.rawValue, target: head.target,
                            version: head.version.description, framing: head.framing,
                            keepAlive: head.keepAlive, expectsContinue: head.expectsContinue,
                            headers: headers)
                    )
                case .body(let range): return (consumed, .body(Array(raw[range])))
                case .end: return (consumed, .end)
                case .error(let error): return (consumed, .error(error))
                }
            }
            pending.removeFirst(consumed)
            guard let event else { break }
            record(event)
            if case .error = event { return events }
        }
        if offset >= input.count { return events }
    }
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// The first error in `events`, if any.
func firstError(_ events: [ParsedEvent]) -> HTTPParseError? {
    for case .error(let error) in events { return error }
    return nil
}
