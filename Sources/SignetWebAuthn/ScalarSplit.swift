extension Substring {
    /// The text split at every `delimiter` code point. Not at Characters: a character that joins
    /// the one after it into a grapheme cluster (U+0600 ARABIC NUMBER SIGN, a prepended mark)
    /// makes `x\u{600},` a single Character, which a Character split would not cut, so a
    /// client's `X-Forwarded-For: 1.2.3.4\u{600}` would glue its proxy's `, CLIENT` to it.
    public func split(atScalar delimiter: Unicode.Scalar, maxSplits: Int = .max) -> [Substring] {
        unicodeScalars.split(separator: delimiter, maxSplits: maxSplits).map { Substring($0) }
    }
}
