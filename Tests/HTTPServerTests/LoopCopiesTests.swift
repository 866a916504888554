import Foundation
import Synchronization
import Testing

@testable import HTTPServer

/// Each event loop hands out copies of its own of a prepared response (``LoopCopies``), and a
/// copy answers exactly as its original (``HTTPPreparedResponse/replica()``).
@Suite("Loop copies of prepared responses")
struct LoopCopiesTests {
    static func file(owner: AnyObject & Sendable) -> HTTPFileBody {
        HTTPFileBody(descriptor: 7, offset: 4096, count: 321, owner: owner)
    }

    final class Owner: Sendable {}

    @Test func aReplicaIsAnotherObjectWithTheSameHeadFieldsAndBody() {
        let owner = Owner()
        let original = HTTPPreparedResponse(
            status: .ok, headers: ["Content-Type": "image/png", "ETag": "\"f-1\""], fileBody: Self.file(owner: owner))
        let copy = original.replica()
        #expect(copy !== original)
        #expect(copy.head == original.head && copy.status == original.status && copy.body == original.body)
        #expect(copy.headers["ETag"] == "\"f-1\"")
        let (a, b) = (original.fileBody!, copy.fileBody!)
        #expect(a !== b)
        #expect(a.descriptor == b.descriptor && a.offset == b.offset && a.count == b.count)
        #expect(b.owner === owner)
        // The copy's arrays are the original's, not copies of them.
        original.head.withUnsafeBufferPointer { h in
            copy.head.withUnsafeBufferPointer { #expect($0.baseAddress == h.baseAddress) }
        }
    }

    @Test func eachLoopGetsItsOwnCopyAndTheSameOneEveryTime() {
        let ok = HTTPPreparedResponse(status: .ok, headers: ["ETag": "\"a\""], body: Array("body".utf8))
        let notModified = HTTPPreparedResponse(status: .notModified, headers: ["ETag": "\"a\""])
        let copies = LoopCopies([ok, notModified], loops: 3)
        var seen: [ObjectIdentifier] = []
        for loop in 0..<3 {
            for index in 0..<2 {
                let first = copies.response(index, loop: loop)
                #expect(first === copies.response(index, loop: loop))
                #expect(first !== ok && first !== notModified)
                #expect(first.head == (index == 0 ? ok.head : notModified.head))
                seen.append(ObjectIdentifier(first))
            }
        }
        #expect(Set(seen).count == 6)
        // A loop number past the count wraps; the originals stay for other threads.
        #expect(copies.response(0, loop: 3) === copies.response(0, loop: 0))
        #expect(copies.original(1) === notModified)
        #expect(copies.copyBytes >= 6 * HTTPPreparedResponse.allocatedBytes(96))
    }

    @Test func copiesAreReleasedWithTheirHolder() {
        weak var weakCopy: HTTPPreparedResponse?
        do {
            let copies = LoopCopies([HTTPPreparedResponse(status: .ok, body: [1, 2, 3])], loops: 2)
            weakCopy = copies.response(0, loop: 1)
            #expect(weakCopy != nil)
        }
        #expect(weakCopy == nil)
    }

    @Test func threadsRacingForOneLoopsCopyAllGetTheOneKept() async {
        let copies = LoopCopiesBox(LoopCopies([HTTPPreparedResponse(status: .ok, body: [9])], loops: 1))
        let ids = await withTaskGroup(of: ObjectIdentifier.self) { group in
            for _ in 0..<8 { group.addTask { ObjectIdentifier(copies.copies.response(0, loop: 0)) } }
            var ids = Set<ObjectIdentifier>()
            for await id in group { ids.insert(id) }
            return ids
        }
        #expect(ids.count == 1)
        #expect(ids.first == ObjectIdentifier(copies.copies.response(0, loop: 0)))
    }
}

/// Holds a ``LoopCopies`` for tasks to share.
final class LoopCopiesBox: Sendable {
    let copies: LoopCopies
    init(_ copies: consuming LoopCopies) { self.copies = copies }
}
