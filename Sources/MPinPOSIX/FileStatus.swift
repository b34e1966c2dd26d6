#if canImport(Glibc)
import Glibc
#endif

/// The fields of `struct stat` the programs check before they trust a file (its type, its
/// permission bits, its owner) and its size, read with fstat or stat.
///
/// Swift code that also imports Foundation sees glibc's `struct stat` as declared by
/// Foundation's CoreFoundation module, whose headers include <sys/stat.h> first; with the
/// MemberImportVisibility rule its fields would then need `import CoreFoundation`, an
/// implementation module of Foundation. Reading them here, where only Glibc is imported, keeps
/// those files to the imports they mean.
package struct FileStatus: Equatable, Sendable {
    /// `st_mode`: the file type (`S_IFMT` bits) and the permission bits.
    package let mode: UInt32
    /// `st_uid`: the owner.
    package let owner: UInt32
    /// `st_size` in bytes.
    package let size: Int64

    /// fstat of an open descriptor; nil when it fails (errno says why).
    package init?(descriptor: Int32) {
        var st = stat()
        guard fstat(descriptor, &st) == 0 else { return nil }
        self.init(st)
    }

    /// stat of a path (following symbolic links); nil when it fails (errno says why).
    package init?(path: String) {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        self.init(st)
    }

    private init(_ st: stat) {
        mode = UInt32(st.st_mode)
        owner = UInt32(st.st_uid)
        size = Int64(st.st_size)
    }

    /// Whether it is a regular file.
    package var isRegularFile: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFREG) }

    /// The permission bits (`mode & 0o7777`).
    package var permissions: UInt32 { mode & 0o7777 }
}
