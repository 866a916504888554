import Glibc

/// A file's modification time, size and inode, to notice that another replica changed it
/// (files are replaced by renaming a new file over them, so the inode changes even when the time
/// and the size come out the same).
struct FileStamp: Equatable {
    var modified: Double
    var size: Int
    var inode: UInt64

    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        modified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
        size = Int(info.st_size)
        inode = UInt64(info.st_ino)
    }
}
