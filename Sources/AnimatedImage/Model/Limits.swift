/// The checks of ``DecodeLimits`` made while indexing, each naming the limit it enforces.
enum Limits {
    static func checkFileSize(_ size: Int, limits: DecodeLimits) throws {
        try check(size, .maxFileBytes, limits.maxFileBytes)
    }

    static func checkCanvas(width: Int, height: Int, limits: DecodeLimits) throws {
        try check(max(width, height), .maxDimension, limits.maxDimension)
        try check(width * height, .maxFramePixels, limits.maxFramePixels)
    }

    static func checkFrame(_ rect: PixelRect, limits: DecodeLimits) throws {
        try check(rect.width * rect.height, .maxFramePixels, limits.maxFramePixels)
    }

    static func checkFrameCount(_ count: Int, canvasPixels: Int, limits: DecodeLimits) throws {
        try check(count, .maxFrames, limits.maxFrames)
        try check(count * canvasPixels, .maxTotalPixels, limits.maxTotalPixels)
    }

    static func checkDecodeMemory(_ bytes: Int, limits: DecodeLimits) throws {
        try check(bytes, .maxDecodeBytes, limits.maxDecodeBytes)
    }

    /// Throws ``AnimatedImageError/limitExceeded(_:value:limit:)`` naming `which` when `value`
    /// is over `limit`.
    private static func check(_ value: Int, _ which: DecodeLimit, _ limit: Int) throws {
        if value > limit { throw AnimatedImageError.limitExceeded(which, value: value, limit: limit) }
    }
}
