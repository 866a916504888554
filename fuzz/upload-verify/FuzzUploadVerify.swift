// libFuzzer entry for what ImageStore.commit does with an upload's bytes, and what the frame cache
// later does with the stored file (linked with AnimatedImage by fuzz/run.sh; under
// FuzzLimits.decoding). The run traps when:
//   - verification crashes, or refuses an input with anything but "not an image" (415) or
//     malformed / no complete frame / over a limit (422): a frame error or an index error there
//     would be a 5xx;
//   - the stored file, re-indexed as the store loads it (`.trusted(frameCount:)` from the record),
//     gives another metadata document than the upload's;
//   - a frame of a verified image does not render: verification promised every kept frame decodes;
//   - a frame index past the end does not answer "out of range" (404);
//   - verifying in two steps, as the store does under a decode-memory budget (index, reserve
//     `decodeMemory.verificationBytes`, then `verifyingFrames()`), keeps other frames than one
//     `.full` verification, or the memory figures are not ordered (a canvas ≤ a render from cold).

@testable import AnimatedImage

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = imageBytes(data, size)
    let limits = FuzzLimits.decoding
    let verified: AnimatedImage
    do {
        verified = try AnimatedImage(bytes: bytes, limits: limits, verification: .full)
    } catch {
        checkIndexingError(error)  // 415 for unsupportedFormat, 422 for the others
        return 0
    }
    checkIndex(verified.index, bytes: bytes, limits: limits)
    let record = ImageMetadata(image: verified)
    do {
        let twoStep = try AnimatedImage(bytes: bytes, limits: limits, verification: .structural).verifyingFrames()
        check(ImageMetadata(image: twoStep) == record, "two-step verification keeps other frames")
    } catch {
        fatalError("fuzz invariant: two-step verification threw \(error) where .full did not")
    }
    let memory = verified.decodeMemory
    check(
        memory.canvasBytes == verified.index.bytesPerFrame && memory.coldRenderBytes > memory.canvasBytes
            && memory.largestBytes >= memory.verificationBytes, "decode memory figures \(memory)")

    let stored: AnimatedImage
    do {
        stored = try AnimatedImage(bytes: bytes, limits: limits, verification: .trusted(frameCount: record.frameCount))
    } catch {
        fatalError("fuzz invariant: a verified upload does not load as stored: \(error)")
    }
    check(ImageMetadata(image: stored) == record, "the stored image's metadata differs from the upload's")

    let renderer = FrameRenderer(image: stored)
    for i in 0..<stored.frameCount {
        do {
            _ = try renderer.render(i)
        } catch {
            fatalError("fuzz invariant: frame \(i) of a verified image does not render: \(error)")
        }
    }
    do {
        _ = try renderer.render(stored.frameCount)
        fatalError("fuzz invariant: frame \(stored.frameCount) of \(stored.frameCount) rendered")
    } catch AnimatedImageError.frameOutOfRange(let index, let count) {
        check(index == stored.frameCount && count == stored.frameCount, "out of range \(index) of \(count)")
    } catch {
        fatalError("fuzz invariant: frame past the end threw \(error)")
    }
    return 0
}
