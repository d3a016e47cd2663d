import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A plain TCP connection to a loopback server, for what no HTTP client sends: stalled and
/// trickled bodies, broken chunk framing, half-closes, HTTP/1.0.
final class RawConnection {
    let fd: Int32
    /// Whether `connect` succeeded.
    let connected: Bool

    /// Connects to 127.0.0.1:`port`; reads wait at most `receiveTimeout`.
    init(port: Int, receiveTimeout: Duration = .seconds(5)) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        connected =
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            } == 0
        setReceiveTimeout(receiveTimeout)
    }

    /// Connects and sends `text` at once.
    convenience init(port: Int, sending text: String, receiveTimeout: Duration = .seconds(5)) {
        self.init(port: port, receiveTimeout: receiveTimeout)
        write(text)
    }

    deinit { close(fd) }

    /// Sends `text` (no SIGPIPE when the server has closed); returns whether all of it went.
    @discardableResult
    func write(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Ends the sending side: the server reads the end of the stream.
    func shutdownWrite() {
        shutdown(fd, Int32(SHUT_WR))
    }

    /// How long a read waits for data.
    func setReceiveTimeout(_ timeout: Duration) {
        let (seconds, attoseconds) = timeout.components
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// One read: the bytes (empty when the server closed, `nil` on a timeout or an error).
    func receive() -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return count >= 0 ? Array(buffer.prefix(count)) : nil
    }

    /// What the server sent until it closed the connection, or until `timeout`.
    ///
    /// - Returns: The text and whether the server closed the connection (end of stream or reset)
    ///   within `timeout`.
    func readUntilClosed(timeout: Duration) -> (text: String, closed: Bool) {
        var bytes: [UInt8] = []
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            setReceiveTimeout(max(deadline - ContinuousClock.now, .milliseconds(10)))
            guard let chunk = receive() else {
                if errno == ECONNRESET { return (String(decoding: bytes, as: UTF8.self), true) }
                continue
            }
            if chunk.isEmpty { return (String(decoding: bytes, as: UTF8.self), true) }
            bytes += chunk
        }
        return (String(decoding: bytes, as: UTF8.self), false)
    }

    /// The status codes of the HTTP responses in `text`, in order.
    static func statuses(in text: String) -> [Int] {
        text.components(separatedBy: "\r\n").compactMap { line -> Int? in
            guard line.hasPrefix("HTTP/1."), line.count >= 12 else { return nil }
            return Int(line.dropFirst(9).prefix(3))
        }
    }
}
