#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The check every open makes of who else may touch a store (format-spec.md, "Permissions"):
/// a folder or file that users other than its owner may write is refused, as PostgreSQL refuses
/// a data directory others can reach, because anyone who can write there can make the app read
/// values they chose; a folder others may read beyond ``StoreOptions/permissions`` is closed by
/// a writing open (its mode alone keeps them from every file in it) and warned about by a
/// read-only one, which changes nothing.
enum StorePermissionCheck {
    /// Group and other write bits.
    static let writableByOthers: UInt16 = 0o022

    /// Checks `directory` and every entry in it. Throws ``CaskError/unsafePermissions(path:mode:)``,
    /// or the I/O error of a failed `stat` (an entry removed meanwhile is skipped). Nothing is
    /// checked on a file system that keeps no modes.
    static func check(_ directory: String, options: StoreOptions, writing: Bool) throws(CaskError) {
        let fs = options.fileSystem
        guard let folderMode = try refuseWritableByOthers(directory, fs: fs) else { return }
        let wider = folderMode & 0o077 & ~options.permissions.folderMode
        guard wider != 0 else { return }
        let asked = String(options.permissions.folderMode, radix: 8)
        let found = String(folderMode, radix: 8)
        guard writing else {
            options.logger.warning("\(directory) may be read by other users (mode \(found), StoreOptions.permissions asks \(asked)); a read-only open changes nothing: run `chmod go-rwx \(directory)`, or open it once for writing")
            return
        }
        do throws(CaskError) {
            try fs.setPermissions(folderMode & ~wider, of: directory)
            options.logger.notice("\(directory) could be read by other users (mode \(found)); closed to them (StoreOptions.permissions)")
        } catch {
            options.logger.warning("\(directory) may be read by other users (mode \(found)) and could not be closed to them: \(error)")
        }
    }

    /// The refusing half of ``check(_:options:writing:)``, which `cask verify` and `cask dump`
    /// make too (a report on files others could have changed would vouch for them): throws
    /// ``CaskError/unsafePermissions(path:mode:)`` when the folder or an entry may be written by
    /// other users. Returns the folder's mode (nil on a file system that keeps none). Changes nothing.
    static func refuseWritableByOthers(_ directory: String, fs: any CaskFileSystem) throws(CaskError) -> UInt16? {
        guard let folderMode = try fs.permissions(of: directory) else { return nil }
        try refuseIfWritableByOthers(directory, folderMode)
        for name in try fs.contentsOfDirectory(directory) {
            let path = FileNames.join(directory, name)
            let mode: UInt16?
            do throws(CaskError) { mode = try fs.permissions(of: path) } catch .io(_, _, ENOENT) { continue }
            if let mode { try refuseIfWritableByOthers(path, mode) }
        }
        return folderMode
    }

    private static func refuseIfWritableByOthers(_ path: String, _ mode: UInt16) throws(CaskError) {
        if mode & writableByOthers != 0 { throw .unsafePermissions(path: path, mode: mode & 0o7777) }
    }
}
