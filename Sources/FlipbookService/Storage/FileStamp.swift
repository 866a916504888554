#if canImport(Glibc)
import Glibc
#endif

/// A file's modification time and size, to notice that another replica changed it.
struct FileStamp: Equatable {
    var modified: Double
    var size: Int

    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        modified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
        size = Int(info.st_size)
    }
}
