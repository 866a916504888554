import CDeflate
import Synchronization

/// What one PNG encode needs from libdeflate: a compressor at one level, and two scratch
/// buffers (the filtered scanlines, the zlib stream) that are reused from encode to encode.
///
/// libdeflate compressors are costly to allocate (hundreds of KiB of match-finder tables), so
/// workspaces are borrowed from ``DeflateWorkspacePool`` and given back after each encode.
///
/// `@unchecked Sendable`: a workspace has exactly one user at a time — whoever holds it between
/// taking it from the pool and giving it back, the pool's mutex handing it over. libdeflate
/// allows a compressor to move between threads as long as two never use it at once.
final class DeflateWorkspace: @unchecked Sendable {
    /// The libdeflate level, 0 (stored blocks only) to 9.
    let level: Int
    private let compressor: OpaquePointer
    let scanlines = ScratchBuffer()
    private let stream = ScratchBuffer()

    init(level: Int) throws {
        guard let compressor = libdeflate_alloc_compressor(Int32(level)) else {
            throw PNGEncodingError(message: "libdeflate could not allocate a level-\(level) compressor")
        }
        self.level = level
        self.compressor = compressor
    }

    deinit { libdeflate_free_compressor(compressor) }

    /// Compresses `input` as one zlib stream (RFC 1950) into the workspace's stream buffer.
    /// The result stays valid until the next call on this workspace.
    func zlibCompress(_ input: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer {
        let bound = libdeflate_zlib_compress_bound(compressor, input.count)
        let output = stream.bytes(count: bound)
        let written = libdeflate_zlib_compress(
            compressor, input.baseAddress, input.count,
            output.baseAddress, output.count)
        // libdeflate returns 0 only when the output does not fit, which the bound rules out.
        guard written > 0 else { throw PNGEncodingError(message: "libdeflate found its own bound too small") }
        return UnsafeRawBufferPointer(rebasing: output[..<written])
    }

    /// Frees scratch buffers that grew past `limit` bytes (an unusually large frame), so an idle
    /// workspace holds at most about twice `limit`.
    func trimScratch(keepingAtMost limit: Int) {
        scanlines.trim(keepingAtMost: limit)
        stream.trim(keepingAtMost: limit)
    }
}

/// Idle ``DeflateWorkspace``s, one list per compression level, behind one mutex. Taking and
/// giving back are O(1) under the lock; the compression itself runs outside it, so encodes on
/// several threads proceed in parallel, each with its own workspace.
enum DeflateWorkspacePool {
    /// Workspaces kept per level; more are made when more threads encode at once, and the
    /// extras freed when given back.
    static let idleLimitPerLevel = 16
    /// Scratch buffers above this size are freed when their workspace is given back: 1 MiB holds
    /// the filtered rows of a 640×360 RGBA frame. Larger frames allocate theirs each time
    /// (a cost small beside compressing them), so idle workspaces stay small.
    static let retainedScratchBytes = 1 << 20

    private static let idle = Mutex<[[DeflateWorkspace]]>(Array(repeating: [], count: 10))

    /// Runs `body` with a workspace at `level` (0–9) that no other thread uses meanwhile.
    static func withWorkspace<Result>(level: Int, _ body: (DeflateWorkspace) throws -> Result) throws -> Result {
        precondition((0...9).contains(level), "compression level \(level) outside 0–9")
        let workspace = try idle.withLock { $0[level].popLast() } ?? DeflateWorkspace(level: level)
        defer { giveBack(workspace) }
        return try body(workspace)
    }

    private static func giveBack(_ workspace: DeflateWorkspace) {
        workspace.trimScratch(keepingAtMost: retainedScratchBytes)
        idle.withLock { lists in
            if lists[workspace.level].count < idleLimitPerLevel { lists[workspace.level].append(workspace) }
        }
    }
}

/// A raw byte buffer reused across calls: grows on demand and keeps its allocation until
/// trimmed or freed. Not thread-safe; owned by one ``DeflateWorkspace``.
final class ScratchBuffer {
    private var storage = UnsafeMutableRawBufferPointer(start: nil, count: 0)

    /// The first `count` bytes of the buffer, grown if needed; their contents are unspecified.
    func bytes(count: Int) -> UnsafeMutableRawBufferPointer {
        if storage.count < count {
            storage.deallocate()
            storage = .allocate(byteCount: count, alignment: 16)
        }
        return UnsafeMutableRawBufferPointer(rebasing: storage[..<count])
    }

    func trim(keepingAtMost limit: Int) {
        if storage.count > limit {
            storage.deallocate()
            storage = UnsafeMutableRawBufferPointer(start: nil, count: 0)
        }
    }

    deinit { storage.deallocate() }
}
