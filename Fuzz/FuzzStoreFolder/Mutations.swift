/// The fuzz input as a list of mutation instructions on the base store's files. Each is
///
///     op  file  offset(u16 LE)  n  [data]
///
/// `op & 7`: 0 overwrite with n % 33 data bytes, 1 insert them, 2 truncate at the offset,
/// 3 delete n bytes, 4 xor with n % 33 data bytes, 5 write 8 data bytes as a u64 (a sequence
/// number, a length), 6 remove the file, 7 append a copy of n bytes from the offset (a replayed
/// record). `file` picks a file by name order; the offset is taken modulo the size + 1.
/// Unless `op & 0x80`, every checksum the change touched is recomputed afterwards (the segment
/// header's, each record's whose bytes it touched, a hint's header and body, the snapshot's
/// trailer), so that the change reaches past the checksums. With `op & 0x40`, hint headers and
/// the snapshot's segment marks are then made to describe the segments as they now are (size,
/// tail checksum), so that the open trusts them.
struct Mutation {
    var op: UInt8
    var file: Int
    var offset: Int
    var count: Int
    var data: [UInt8]

    static func parse(_ input: UnsafeBufferPointer<UInt8>, limit: Int = 8) -> [Mutation] {
        var result: [Mutation] = []
        var i = 0
        while i + 5 <= input.count && result.count < limit {
            let op = input[i]
            var m = Mutation(op: op, file: Int(input[i + 1]), offset: Int(input[i + 2]) | Int(input[i + 3]) << 8, count: Int(input[i + 4]), data: [])
            i += 5
            let want = [0, 1, 4].contains(op & 7) ? m.count % 33 : op & 7 == 5 ? 8 : 0
            let take = min(want, input.count - i)
            m.data = Array(input[i..<(i + take)])
            i += take
            result.append(m)
        }
        return result
    }

    /// Applies the mutation to `files`, then the checksum fixes it asks for.
    func apply(to files: inout [String: [UInt8]]) {
        let names = files.keys.sorted()
        guard !names.isEmpty else { return }
        let name = names[file % names.count]
        var bytes = files[name]!
        let at = offset % (bytes.count + 1)
        var touched = at..<(at + 1)
        switch op & 7 {
        case 0:
            for (k, b) in data.enumerated() where at + k < bytes.count { bytes[at + k] = b }
            touched = at..<(at + max(data.count, 1))
        case 1:
            bytes.insert(contentsOf: data, at: at)
            touched = at..<(at + max(data.count, 1))
        case 2: bytes.removeSubrange(at...)
        case 3: bytes.removeSubrange(at..<min(bytes.count, at + count))
        case 4:
            for (k, b) in data.enumerated() where at + k < bytes.count { bytes[at + k] ^= b }
            touched = at..<(at + max(data.count, 1))
        case 5:
            var word = [UInt8](repeating: 0, count: 8)
            for (k, b) in data.enumerated() { word[k] = b }
            for k in 0..<8 where at + k < bytes.count { bytes[at + k] = word[k] }
            touched = at..<(at + 8)
        case 6:
            files[name] = nil
            return
        default:
            bytes.append(contentsOf: bytes[at..<min(bytes.count, at + count)])
            touched = at..<(bytes.count + 1)
        }
        if op & 0x80 == 0 { Fixup.checksums(of: name, &bytes, touched: touched) }
        files[name] = bytes
        if op & 0x40 != 0 { Fixup.describeSegments(&files) }
    }
}
