import Foundation
import Synchronization
import Testing

@testable import HTTPServer

/// Each event loop hands out responses of its own made from a prepared answer's template
/// (``LoopCopies``), and a response made from a template answers exactly as one prepared directly
/// (``HTTPPreparedResponse/Template/response()``).
@Suite("Loop copies of prepared responses")
struct LoopCopiesTests {
    static func file(owner: AnyObject & Sendable) -> HTTPFileBody {
        HTTPFileBody(descriptor: 7, offset: 4096, count: 321, owner: owner)
    }

    final class Owner: Sendable {}

    @Test func aTemplatesResponsesAreObjectsOfTheirOwnWithTheSameHeadFieldsAndBody() {
        let owner = Owner()
        let headers: HTTPHeaders = ["Content-Type": "image/png", "ETag": "\"f-1\""]
        let template = HTTPPreparedResponse.Template(status: .ok, headers: headers, fileBody: Self.file(owner: owner))
        let direct = HTTPPreparedResponse(status: .ok, headers: headers, fileBody: Self.file(owner: owner))
        let (first, second) = (template.response(), template.response())
        #expect(first !== second)
        #expect(first.head == direct.head && first.status == direct.status && first.body == direct.body)
        #expect(first.headers["ETag"] == "\"f-1\"")
        let (a, b) = (first.fileBody!, second.fileBody!)
        #expect(a !== b && a !== template.fileBody! && b !== template.fileBody!)
        #expect(a.descriptor == 7 && a.offset == 4096 && a.count == 321)
        #expect(a.descriptor == b.descriptor && a.offset == b.offset && a.count == b.count)
        #expect(a.owner === owner && b.owner === owner)
        // The responses' arrays are the template's, not copies of them.
        first.head.withUnsafeBufferPointer { h in
            second.head.withUnsafeBufferPointer { #expect($0.baseAddress == h.baseAddress) }
        }
        // Made directly, a prepared response keeps the file body it was given.
        let given = Self.file(owner: owner)
        #expect(HTTPPreparedResponse(status: .ok, fileBody: given).fileBody === given)
    }

    @Test func eachLoopGetsItsOwnResponseAndTheSameOneEveryTime() {
        let ok = HTTPPreparedResponse.Template(status: .ok, headers: ["ETag": "\"a\""], body: Array("body".utf8))
        let notModified = HTTPPreparedResponse.Template(status: .notModified, headers: ["ETag": "\"a\""])
        let copies = LoopCopies([ok, notModified], loops: 3)
        var seen: [ObjectIdentifier] = []
        for loop in 0..<3 {
            for index in 0..<2 {
                let first = copies.response(index, loop: loop)
                #expect(first === copies.response(index, loop: loop))
                #expect(first.head == (index == 0 ? ok.head : notModified.head))
                #expect(first.status.code == (index == 0 ? 200 : 304))
                seen.append(ObjectIdentifier(first))
            }
        }
        #expect(Set(seen).count == 6)
        // A loop number past the count wraps; other threads get a new response each time.
        #expect(copies.response(0, loop: 3) === copies.response(0, loop: 0))
        let fresh = copies.fresh(1)
        #expect(fresh.head == notModified.head && fresh !== copies.fresh(1))
        #expect(!seen.contains(ObjectIdentifier(fresh)))
        // Counted: the one block of slots and templates, and six responses.
        #expect(
            copies.heapBytes
                == HTTPPreparedResponse.allocatedBytes(6 * 8 + 2 * MemoryLayout<HTTPPreparedResponse.Template>.stride)
                + 6 * HTTPPreparedResponse.allocatedBytes(96))
    }

    @Test func responsesAreReleasedWithTheirHolder() {
        weak var weakResponse: HTTPPreparedResponse?
        weak var weakOwner: Owner?
        do {
            let owner = Owner()
            weakOwner = owner
            let template = HTTPPreparedResponse.Template(status: .ok, fileBody: Self.file(owner: owner))
            let copies = LoopCopies([template], loops: 2)
            weakResponse = copies.response(0, loop: 1)
            #expect(weakResponse != nil)
        }
        #expect(weakResponse == nil)
        // The templates go too, and with them what their file body kept.
        #expect(weakOwner == nil)
    }

    @Test func threadsRacingForOneLoopsResponseAllGetTheOneKept() async {
        let copies = LoopCopiesBox(LoopCopies([HTTPPreparedResponse.Template(status: .ok, body: [9])], loops: 1))
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
