internal import CLMDB

/// A zero-length buffer's stand-in address: LMDB wants a non-null pointer even for empty data.
nonisolated(unsafe) private let emptyByte = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)

extension MDB_val {
    @inline(__always)
    init(_ buffer: UnsafeRawBufferPointer) {
        self.init(mv_size: buffer.count, mv_data: UnsafeMutableRawPointer(mutating: buffer.baseAddress) ?? emptyByte)
    }

    @inline(__always)
    var buffer: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: mv_data, count: mv_size)
    }
}
