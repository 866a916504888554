import AnimatedImage
import Glibc

/// The prefix of an upload received so far, mapped for the indexers (private, copy-on-write:
/// the file is never written).
///
/// GIF and APNG prefixes are indexed as they are: their indexers serve the complete frames of a
/// cut file. A WebP cut short is refused whole (as Chromium refuses it), so a WebP prefix is
/// shown to the indexer as the file its complete chunks make: cut after the last chunk that is
/// all in, with the RIFF size saying so (4 bytes patched in the private mapping; one page is
/// copied). Its frames are then those whose `ANMF` chunk has fully arrived.
enum UploadPrefix {
    /// The bytes to index, and how many bytes the file had.
    static func map(_ path: String) -> (bytes: ImageBytes, fileBytes: Int)? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size > 0 else { return nil }
        let size = Int(info.st_size)
        guard let address = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0),
            address != UnsafeMutableRawPointer(bitPattern: -1)
        else { return nil }
        let memory = UnsafeMutableRawBufferPointer(start: address, count: size)
        let count = completeWebPLength(memory) ?? size
        let start = UInt(bitPattern: address)
        let bytes = ImageBytes(borrowing: UnsafeRawBufferPointer(start: address, count: count)) {
            munmap(UnsafeMutableRawPointer(bitPattern: start), size)
        }
        return (bytes, size)
    }

    /// For a WebP whose RIFF size says more than is there: the length of its complete chunks,
    /// with the RIFF size in `memory` patched to it. nil for anything else.
    static func completeWebPLength(_ memory: UnsafeMutableRawBufferPointer) -> Int? {
        guard memory.count >= 12, Array(memory[0..<4]) == Array("RIFF".utf8), Array(memory[8..<12]) == Array("WEBP".utf8)
        else { return nil }
        func le32(_ at: Int) -> Int {
            Int(memory[at]) | Int(memory[at + 1]) << 8 | Int(memory[at + 2]) << 16 | Int(memory[at + 3]) << 24
        }
        guard le32(4) + 8 > memory.count else { return nil }  // all there
        var end = 12
        while end + 8 <= memory.count {
            let size = le32(end + 4)
            let next = end + 8 + size + (size & 1)
            guard next <= memory.count else { break }
            end = next
        }
        let riff = UInt32(end - 8)
        for i in 0..<4 { memory[4 + i] = UInt8(truncatingIfNeeded: riff >> (8 * UInt32(i))) }
        return end
    }
}
