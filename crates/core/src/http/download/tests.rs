use super::*;

#[test]
fn filenames_are_safe_and_exact() {
    let cd = content_disposition("report.pdf", Disposition::Attachment).to_string();
    assert_eq!(cd, "attachment; filename=\"report.pdf\"");
    let cd = content_disposition("zażółć \"x\"/..\\a\r\nb.txt", Disposition::Inline);
    let text = cd.to_string();
    assert!(
        text.starts_with("inline; filename=\"za____ _x__.._ab.txt\""),
        "{text}"
    );
    assert!(
        text.contains("filename*=UTF-8''za%C5%BC%C3%B3%C5%82%C4%87"),
        "{text}"
    );
    assert!(!text.contains('\n') && !text.contains('\r'));
    let cd = content_disposition(" \u{7} ", Disposition::Attachment).to_string();
    assert_eq!(cd, "attachment; filename=\"download\"");
}

#[test]
fn ranges_parse_as_the_rfc_says() {
    let part = |r: RangeInclusive<u64>| Some(Wanted::Part(r));
    assert_eq!(parse_range("bytes=0-9", 100), part(0..=9));
    assert_eq!(parse_range("bytes=90-", 100), part(90..=99));
    assert_eq!(parse_range("bytes=90-1000", 100), part(90..=99));
    assert_eq!(parse_range("bytes=-10", 100), part(90..=99));
    assert_eq!(parse_range("bytes=-1000", 100), part(0..=99));
    assert_eq!(parse_range("BYTES = 5 - 5", 100), part(5..=5));
    assert_eq!(parse_range("bytes=100-", 100), Some(Wanted::Unsatisfiable));
    assert_eq!(parse_range("bytes=-0", 100), Some(Wanted::Unsatisfiable));
    assert_eq!(parse_range("bytes=0-", 0), Some(Wanted::Unsatisfiable));
    // Malformed or several ranges: ignored (the whole file).
    for bad in [
        "bytes=9-0",
        "bytes=a-b",
        "items=0-1",
        "bytes=0-1,5-6",
        "bytes=-",
        "bytes=+1-2",
    ] {
        assert_eq!(parse_range(bad, 100), None, "{bad}");
    }
}
