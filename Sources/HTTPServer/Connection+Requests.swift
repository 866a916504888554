import Glibc
import SystemResources

/// Request handling of a connection: routing a parsed head, body policies, handler calls, and
/// writing responses strictly in request order.
extension Connection {
    // MARK: - Requests

    func startRequest(_ head: consuming HTTPRequestHead) {
        requestCount += 1
        // The match is switched on once, as made: its route and parameters go into the request
        // (binding them out of a match kept for the switch copied both, and destroyed both twice).
        // The target stays bytes of the head (``RawTarget``): no `String` of it, its path or query.
        // The head is handed over to the request whole (its references moved, not retained for
        // the request and released with the head); the exchange copies what its record needs.
        let hasBody = head.framing != .none
        switch loop.shared.routeTable.match(head.method, target: head.rawTarget) {
        case .found(let route, let parameters):
            let (sequence, requestID) = beginExchange(head, route: route.pattern, routeIndex: route.index)
            let request = HTTPRequest(
                head: head, pathParameters: parameters, body: [], remoteAddress: peer, connectionID: id,
                requestNumber: requestCount, loop: loop.index, requestID: requestID, route: route.pattern)
            startRouted(request, route, sequence: sequence)
        case .notFound:
            let (sequence, requestID) = beginExchange(head, route: nil, routeIndex: -1)
            let request = unroutedRequest(head, requestID)
            reject(sequence, loop.shared.router.notFoundResponse(request), hasBody: hasBody)
        case .methodNotAllowed(let allowed):
            let (sequence, requestID) = beginExchange(head, route: nil, routeIndex: -1)
            let request = unroutedRequest(head, requestID)
            var response = loop.shared.router.methodNotAllowedResponse(request, allowed)
            response.headers.set(name: "Allow", value: allowed.map(\.rawValue).joined(separator: ", "))
            reject(sequence, response, hasBody: hasBody)
        }
    }

    /// Numbers the request and records its exchange (answered in this order); returns its
    /// sequence number and id.
    private func beginExchange(_ head: HTTPRequestHead, route: String?, routeIndex: Int)
        -> (UInt64, HTTPRequestID)
    {
        let sequence = nextSequence
        nextSequence += 1
        return withLoop { loop in
            let requestID = loop.requestID(echoing: head.headers)
            // None while no request was in flight: the loop's spare, which the last exchange
            // on this loop was kept in (still in cache: ``ConnectionSpares``).
            if inFlight.capacity == 0 { swap(&inFlight, &loop.spares.exchanges) }
            inFlight.append(
                Exchange(
                    sequence: sequence,
                    record: HTTPAccessRecord(
                        method: head.method, target: head.rawTarget, route: route, routeIndex: routeIndex,
                        requestHeaders: head.headers, requestID: requestID, remoteAddress: peer, connectionID: id,
                        loop: loop.index, status: 0, bodyBytes: 0, durationNanoseconds: 0),
                    isHead: head.method == .HEAD, isHTTP10: head.version.minor == 0, keepAlive: head.keepAlive,
                    startNanoseconds: UInt64(loop.turnStartNanoseconds)))
            return (sequence, requestID)
        }
    }

    /// The request of a head no route matched (for the 404 and 405 answers).
    private func unroutedRequest(_ head: consuming HTTPRequestHead, _ requestID: HTTPRequestID) -> HTTPRequest {
        HTTPRequest(
            head: head, pathParameters: HTTPPathParameters(), body: [], remoteAddress: peer, connectionID: id,
            requestNumber: requestCount, loop: loop.index, requestID: requestID, route: nil)
    }

    /// A request its route matched: admitted or refused, its body limit checked, then answered at
    /// once (no body) or its body collected or streamed.
    private func startRouted(_ request: HTTPRequest, _ route: Router.Route, sequence: UInt64) {
        let head = request.head
        let hasBody = head.framing != .none
        if let admission = withLoop({ $0.shared.router.admission }), let refusal = admission(request) {
            reject(sequence, refusal, hasBody: hasBody)
            return
        }
        let maxBytes = route.maxBodyBytes ?? configuration.defaultMaxBodyBytes
        if case .contentLength(let length) = head.framing, length > maxBytes {
            reject(sequence, .problem(.contentTooLarge, detail: Self.tooLargeDetail(maxBytes)), hasBody: true)
            return
        }
        if !hasBody, route.collects {
            // No body to wait for: answer now (the parser's end of this request follows).
            current = Incoming(sequence: sequence, mode: .reject)
            if !head.keepAlive { stopParsing = true }
            let result = route.collectHandler(request, HTTPResponder(loop: loop, token: token(sequence)))
            if case .now(let response) = result { setResponse(response, sequence: sequence) }
            return
        }
        let mode: BodyMode
        switch route.action {
        case .collect(let handler):
            var body: [UInt8] = []
            if case .contentLength(let length) = head.framing { body.reserveCapacity(length) }
            mode = .collect(maxBytes: maxBytes, handler: handler, request: request, body: body)
        case .stream(let makeSink):
            let sink = makeSink(request, HTTPResponder(loop: loop, token: token(sequence)))
            mode = .stream(maxBytes: maxBytes, sink: sink)
        }
        current = Incoming(sequence: sequence, mode: mode)
        if hasBody { bodyActivityAt = loop.now }
        if head.expectsContinue {
            if inFlight.count == 1 {
                enqueueStaged { $0.append(contentsOf: ResponseSerializer.continueLine) }
                writeOutput()
            } else {
                inFlight[inFlight.count - 1].pendingContinue = true
            }
        }
    }

    /// Answers without reading the body; a request that has a body ends the connection.
    private func reject(_ sequence: UInt64, _ response: HTTPResponse, hasBody: Bool) {
        if hasBody {
            inFlight[inFlight.count - 1].keepAlive = false
            stopParsing = true
            current = nil
        } else {
            current = Incoming(sequence: sequence, mode: .reject)
        }
        setResponse(response, sequence: sequence)
    }

    func receiveBody(_ chunk: UnsafeRawBufferPointer) {
        guard var incoming = current else { return }
        bodyActivityAt = loop.now
        incoming.received += chunk.count
        switch incoming.mode {
        case .reject:
            break
        case .collect(let maxBytes, let handler, let request, var body):
            if incoming.received > maxBytes {
                failRequest(.contentTooLarge, detail: Self.tooLargeDetail(maxBytes), bodyFailure: .tooLarge)
                return
            }
            // Drop the other references so that `body` is appended in place, not copied.
            current = nil
            incoming.mode = .reject
            body.append(contentsOf: chunk)
            incoming.mode = .collect(maxBytes: maxBytes, handler: handler, request: request, body: body)
        case .stream(let maxBytes, let sink):
            if incoming.received > maxBytes {
                failRequest(.contentTooLarge, detail: Self.tooLargeDetail(maxBytes), bodyFailure: .tooLarge)
                return
            }
            do {
                try sink.write(chunk)
            } catch let error as HTTPError {
                // `current` still names this request, so failRequest answers it (not a new one).
                sink.fail(.sinkFailed)
                failRequest(error.status, detail: error.detail, headers: error.headers, bodyFailure: nil)
                return
            } catch {
                sink.fail(.sinkFailed)
                failRequest(.internalServerError, detail: "The request body could not be stored.", bodyFailure: nil)
                return
            }
        }
        current = incoming
    }

    func endRequest() {
        guard let incoming = current else { return }
        current = nil
        bodyActivityAt = 0
        // An answer written before the parser saw this request end (a GET answered at its head)
        // left the connection with nothing to do: its keep-alive idle time starts now.
        if inFlight.isEmpty && output.isEmpty { idleSince = loop.now }
        if let index = inFlightIndex(of: incoming.sequence), !inFlightState(index).keepAlive {
            stopParsing = true
        }
        let result: HTTPHandlerResult
        switch incoming.mode {
        case .reject:
            return
        case .collect(_, let handler, var request, let body):
            request.body = body
            result = handler(request, HTTPResponder(loop: loop, token: token(incoming.sequence)))
        case .stream(_, let sink):
            result = sink.finish()
        }
        if case .now(let response) = result { setResponse(response, sequence: incoming.sequence) }
    }

    /// Answers the request being received (or a new one) with a problem and closes afterwards.
    func failRequest(
        _ status: HTTPStatus, detail: String, headers: HTTPHeaders = HTTPHeaders(),
        bodyFailure: HTTPBodyFailure?
    ) {
        stopParsing = true
        let sequence: UInt64
        if let incoming = current {
            current = nil
            sequence = incoming.sequence
            if case .stream(_, let sink) = incoming.mode, let bodyFailure { sink.fail(bodyFailure) }
            if let index = inFlightIndex(of: sequence) {
                inFlight[index].keepAlive = false
                inFlight[index].pendingContinue = false
                if inFlightState(index).isAnswered { return }  // already answered (rejected early)
            }
        } else {
            sequence = nextSequence
            nextSequence += 1
            inFlight.append(
                Exchange(
                    sequence: sequence,
                    record: HTTPAccessRecord(
                        method: Self.unknownMethod, target: Self.unknownTarget, route: nil, routeIndex: -1,
                        requestHeaders: HTTPHeaders(), requestID: loop.requestID(for: nil), remoteAddress: peer,
                        connectionID: id, loop: loop.index, status: 0, bodyBytes: 0, durationNanoseconds: 0),
                    isHead: false, isHTTP10: false, keepAlive: false,
                    startNanoseconds: UInt64(loop.turnStartNanoseconds)))
        }
        setResponse(.problem(status, detail: detail, headers: headers), sequence: sequence)
    }

    // MARK: - Responses

    /// A response arrived through the loop's inbox.
    func deliver(_ response: HTTPResponse, sequence: UInt64) {
        setResponse(response, sequence: sequence)
    }

    private func token(_ sequence: UInt64) -> ResponseToken {
        ResponseToken(fd: fd, generation: generation, sequence: sequence)
    }

    /// Records the answer for `sequence` (first answer wins) and sends every answer now in order.
    func setResponse(_ response: HTTPResponse, sequence: UInt64) {
        guard let index = inFlightIndex(of: sequence), !inFlightState(index).isAnswered
        else { return }
        if index == 0 {
            // The oldest request: its answer goes out now, without being stored first.
            serialize(takeOldestExchange(), response, isLast: inFlight.isEmpty && current == nil)
            if phase != .active { inFlight.removeAll() }
            flushReady(sent: 1)
            return
        }
        inFlight[index].response = response
    }

    private func flushReady(sent alreadySent: Int = 0) {
        var sent = alreadySent
        while !inFlight.isEmpty, inFlightState(0).isAnswered {
            var exchange = takeOldestExchange()
            guard let response = exchange.response.take() else { break }
            serialize(consume exchange, response, isLast: inFlight.isEmpty && current == nil)
            sent += 1
            if phase != .active { inFlight.removeAll(); break }
        }
        if !inFlight.isEmpty, case let oldest = inFlightState(0), oldest.pendingContinue, !oldest.isAnswered {
            inFlight[0].pendingContinue = false
            enqueueStaged { $0.append(contentsOf: ResponseSerializer.continueLine) }
        }
        if inFlight.isEmpty && inFlight.capacity > 0 {
            withLoop { if $0.spares.exchanges.capacity == 0 { swap(&inFlight, &$0.spares.exchanges) } }
        }
        if sent > 0 || !inFlight.isEmpty { writeOutput() }
    }

    /// The oldest exchange, taken out of the queue. The only one (the usual case) is moved out
    /// with `removeLast`; `removeFirst` copied it out and destroyed the one in the array.
    private func takeOldestExchange() -> Exchange {
        inFlight.count == 1 ? inFlight.removeLast() : inFlight.removeFirst()
    }

    /// Queues the head (and body) of `exchange`'s `response`, taken out of the queue of requests
    /// already; `isLast` when no other request is in flight or being received. The exchange is
    /// handed over: its access record is moved out of it to the hook, not copied.
    private func serialize(_ exchange: consuming Exchange, _ response: HTTPResponse, isLast: Bool) {
        let closes = !exchange.keepAlive || (isLast && (stopParsing || (loop.draining && parser.isIdle)))
        let connectionHeader: ResponseSerializer.ConnectionHeader =
            closes ? .close : (exchange.isHTTP10 ? .keepAlive : .none)
        let statusCode = response.statusCode
        let sendsBody = !exchange.isHead && !HTTPStatus.forbidsBody(statusCode)
        // Taken, not bound: the exchange made it, and nothing else reads it after this.
        var record = exchange.record.take()!
        // The head is written in place into the output's staging buffer, not by a closure: a
        // closure holding the response and the access record copied both (a retain of each of
        // their fields, and as many releases).
        // None while the queue was empty: the loop's spare, which the last head written on this
        // loop went into (still in cache; one buffer per connection, 256 of them, were not).
        var head = withLoop { output.takeStaging(orFrom: &$0.spares.output) }
        let start = head.count
        ResponseSerializer.appendStatusAndFields(of: response, sendsBody: sendsBody, to: &head)
        withLoop { $0.appendCommonLines(requestID: record.requestID, to: &head) }
        guard let hook = loop.shared.hook else {
            ResponseSerializer.appendEnd(connectionHeader, to: &head)
            output.restoreStaging(consume head, queueingFrom: start)
            queueBody(of: response, sendsBody: sendsBody, closes: closes)
            return
        }
        record.complete(
            status: statusCode, bodyBytes: sendsBody ? response.bodyCount : 0,
            durationNanoseconds: Int64(
                clamping: UInt64(SystemMonotonicClock().nanoseconds()) &- exchange.startNanoseconds))
        if loop.shared.hookAppendsHeaderLines { hook.appendHeaderLines(for: record, to: &head) }
        ResponseSerializer.appendEnd(connectionHeader, to: &head)
        output.restoreStaging(consume head, queueingFrom: start)
        queueBody(of: response, sendsBody: sendsBody, closes: closes)
        hook.responseQueued(consume record)
    }

    /// Queues the body of `response` after its head (queued just before), and closes after it
    /// when `closes`.
    private func queueBody(of response: HTTPResponse, sendsBody: Bool, closes: Bool) {
        notePeak()
        if sendsBody {
            if let file = response.fileBody { enqueue(file) } else { enqueue(response.body) }
        }
        if closes {
            stopParsing = true
            phase = .closingAfterWrite
        }
    }

    /// The method recorded for a request whose request line could not be parsed.
    static let unknownMethod = HTTPMethod(rawValue: "-")
    /// The target (its path `-`) recorded for a request whose request line could not be parsed.
    static let unknownTarget = RawTarget("-")

    static func tooLargeDetail(_ maxBytes: Int) -> String {
        HTTPError.tooLarge(maxBytes: maxBytes).detail
    }
}
