import AnimatedImage

/// Frames made for an image whose content id is not known yet — an upload in progress, whose
/// frames are composited from the bytes received so far — held under their owner's key (the
/// upload session) until the image is stored and they become its frames
/// (``FrameCache/adoptStaged(owner:as:)``), or let go of with the owner. They count in the
/// budget like any frame, go first when room is needed and with every purge (the upload can
/// still fail; a staged frame evicted is made again from the bytes received).
final class StagedImage {
    /// One rendition's staged frames.
    struct Rendition {
        let rendition: FrameRendition
        var frames: [Int: FrameBytes] = [:]
    }

    let owner: String
    /// By ``FrameRendition/key``.
    var renditions: [String: Rendition] = [:]
    /// The tick of the last frame staged or read: owners idle longest lose their frames first.
    var lastUse: UInt64
    /// The budget bytes its frames cost.
    var bytes = 0

    init(owner: String, tick: UInt64) {
        self.owner = owner
        lastUse = tick
    }

    var frameCount: Int { renditions.values.reduce(0) { $0 + $1.frames.count } }

    /// What letting go of its frames gives back to the heap: those not in the memory file.
    var heapBytes: Int {
        renditions.values.reduce(0) { total, rendition in
            total + rendition.frames.values.reduce(0) { $0 + ($1.file == nil ? $1.slotBytes : 0) }
        }
    }
}

extension CacheState {
    /// Frame `index` of `owner`'s staged `rendition`, if held.
    mutating func stagedFrame(owner: String, rendition: FrameRendition, index: Int) -> FrameBytes? {
        guard let image = staged[owner], let bytes = image.renditions[rendition.key]?.frames[index] else { return nil }
        image.lastUse = nextTick()
        return bytes
    }

    /// Keeps `bytes` as frame `index` of `owner`'s `rendition` when there is room without
    /// touching anything but other staged frames and what nobody is about to need; returns
    /// whether it was kept.
    mutating func stage(_ bytes: FrameBytes, owner: String, rendition: FrameRendition, index: Int, now: Double) -> Bool {
        if staged[owner]?.renditions[rendition.key]?.frames[index] != nil { return true }
        guard makeRoom(for: bytes.slotBytes, reach: .outsideWindows, protecting: nil, now: now) else { return false }
        let image = staged[owner] ?? StagedImage(owner: owner, tick: 0)
        staged[owner] = image
        image.lastUse = nextTick()
        image.renditions[rendition.key, default: StagedImage.Rendition(rendition: rendition)].frames[index] = bytes
        image.bytes += bytes.slotBytes
        account(stagedBytes: bytes.slotBytes)
        return true
    }

    /// Lets one staged frame go (room was needed); returns the bytes it cost.
    @discardableResult
    mutating func unstage(owner: String, renditionKey: String, index: Int) -> Int {
        guard let image = staged[owner], let bytes = image.renditions[renditionKey]?.frames.removeValue(forKey: index)
        else { return 0 }
        image.bytes -= bytes.slotBytes
        if image.renditions[renditionKey]?.frames.isEmpty == true { image.renditions[renditionKey] = nil }
        if image.renditions.isEmpty { staged[owner] = nil }
        account(stagedBytes: -bytes.slotBytes)
        freed.note(heapBytes: bytes.file == nil ? bytes.slotBytes : 0)
        counters.evictions += 1
        return bytes.slotBytes
    }

    /// Takes all of `owner`'s staged frames out of the cache's accounting (to be adopted or let go of).
    mutating func takeStaged(owner: String) -> StagedImage? {
        guard let image = staged.removeValue(forKey: owner) else { return nil }
        account(stagedBytes: -image.bytes)
        return image
    }

    /// Calls `take` with each staged frame and its bytes in eviction order — owners idle longest
    /// first, and of one owner's rendition the earliest frames first (a reader following an upload
    /// has played them) — while it returns true; returns false when `take` stopped the walk.
    func walkStaged(_ take: (_ owner: String, _ renditionKey: String, _ index: Int, _ bytes: Int) -> Bool) -> Bool {
        for image in staged.values.sorted(by: { $0.lastUse < $1.lastUse }) {
            for (key, rendition) in image.renditions.sorted(by: { $0.key < $1.key }) {
                for index in rendition.frames.keys.sorted() {
                    if !take(image.owner, key, index, rendition.frames[index]!.slotBytes) { return false }
                }
            }
        }
        return true
    }

    /// Drops every staged frame (a purge).
    mutating func purgeStaged() {
        for owner in Array(staged.keys) {
            guard let image = takeStaged(owner: owner) else { continue }
            freed.note(heapBytes: image.heapBytes)
            counters.evictions += image.frameCount
        }
    }
}
