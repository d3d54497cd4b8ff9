/// The release, for `--version` of both executables. The one place the
/// version is kept: the Makefile reads it from here for the Debian package,
/// and a test holds CHANGELOG.md's newest entry to it.
package enum Version {
    package static let number = "0.1.0"
}
