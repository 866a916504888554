import HTTPServer
import ImageStorage
import Logging
import SystemResources

/// How a route gets the record of an image id without blocking an event loop: at once when the
/// store knows it without waiting on storage, else on threads of its own (lookups that wait on
/// remote storage), answering through the request's responder. Every route that names an image
/// goes through it.
final class RecordLookup: Sendable {
    let store: ImageStore
    private let logger: Logger
    /// Lookups that wait on remote storage run here, off the event loops and off Dispatch's
    /// shared pool (they spend their time waiting on the network).
    private let workers = WorkerThreads(name: "storage-lookup", limit: 32)

    init(store: ImageStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// Calls `body` with the record of `id` and its metadata document (nil when there is no such
    /// image): at once when the store knows it without waiting on storage, else from the storage
    /// workers, answering through `responder`. With `needsOriginal`, the image's original is made
    /// local first, so the frame cache never waits on the network. Storage that cannot be reached
    /// gets a 503 with `Retry-After`.
    func withRecord(
        _ id: String, _ responder: HTTPResponder, needsOriginal: Bool = false,
        _ body: @escaping @Sendable (StoredImage?, [UInt8]) -> HTTPHandlerResult
    ) -> HTTPHandlerResult {
        switch store.quickLookup(id) {
        case .found(let record, let json) where !needsOriginal || store.hasLocalOriginal(record):
            return body(record, json)
        case .missing:
            return body(nil, [])
        case .found, .needsStorage:
            break
        }
        let (store, logger) = (self.store, self.logger)
        if needsOriginal { store.prefetchOriginal(ofContentID: id) }
        workers.submit {
            let result: HTTPHandlerResult
            do throws(StorageFailure) {
                let cached = try store.resolve(id)
                if let cached, needsOriginal { try store.fetchOriginal(cached.record) }
                result = body(cached?.record, cached?.metadataJSON ?? [])
            } catch {
                result = .now(.storageFailure(error, logger: logger))
            }
            if case .now(let response) = result { responder.respond(response) }
        }
        return .later
    }

    /// ``withRecord(_:_:needsOriginal:_:)`` answering 404 for an unknown id.
    func withKnownRecord(
        _ id: String, _ responder: HTTPResponder, needsOriginal: Bool = false,
        _ body: @escaping @Sendable (StoredImage, [UInt8]) -> HTTPHandlerResult
    ) -> HTTPHandlerResult {
        withRecord(id, responder, needsOriginal: needsOriginal) { record, json in
            guard let record else { return .now(.unknownImage(id)) }
            return body(record, json)
        }
    }

    /// The id the request's `:id` parameter names, with its record when the store knows it without
    /// waiting and the original is local (``recordAtOnce(_:loop:)``). The hot path of frames: a
    /// content id is looked up by the path's bytes in the event loop's own view of the records —
    /// no `String` made for it — and its record handed over as the view holds it, not copied.
    func recordAtOnce(named request: HTTPRequest) -> RecordAtOnce {
        var held: ImageStore.HeldRecord?
        let read = request.pathParameters.withUndecodedValue("id") { bytes in
            held = store.freshRecord(contentID: bytes, reader: request.loop)
        }
        if read, let held {
            // Local storage first: asking about the record would copy it out of its box.
            return store.lookupsAreLocal || store.hasLocalOriginal(held.cached.record) ? .held(held) : .notAtHand(id: held.id)
        }
        let id = request.pathParameters["id"] ?? ""
        guard let record = recordAtOnce(id, loop: request.loop) else { return .notAtHand(id: id) }
        return .found(id: id, record)
    }

    /// An id a request names, with its record when it is at hand (``recordAtOnce(named:)``).
    /// Three words: the hot path's answer (``held``) is a reference, and the record copied from
    /// the shared table is boxed, so the frame routes neither copy nor destroy a record's
    /// few hundred bytes of answer on every hit.
    enum RecordAtOnce {
        /// As the event loop's view of the record cache holds it.
        case held(ImageStore.HeldRecord)
        /// A copy, from the store's shared table.
        indirect case found(id: String, StoredImage)
        case notAtHand(id: String)
    }

    /// The record of `id` when the store knows it without waiting and the original is local: the
    /// hot path of frames, looked up in the event loop's own copy of the records.
    func recordAtOnce(_ id: String, loop: Int) -> StoredImage? {
        if let record = store.freshRecord(contentID: id, reader: loop) {
            return store.hasLocalOriginal(record) ? record : nil
        }
        guard case .found(let record, _) = store.quickLookup(id, reader: loop), store.hasLocalOriginal(record)
        else { return nil }
        return record
    }

    /// Runs `work` at once when storage is local, else on the storage workers (its answer goes
    /// through `responder`).
    func offLoop(_ responder: HTTPResponder, _ work: @escaping @Sendable () -> HTTPResponse) -> HTTPHandlerResult {
        if store.lookupsAreLocal { return .now(work()) }
        workers.submit { responder.respond(work()) }
        return .later
    }
}
