//! Text extraction of uploaded PDF and DOCX files into `content`, and its
//! bounds: a compression bomb is stored without text, never read whole.

use std::io::Write;

use lopdf::content::{Content, Operation};
use lopdf::{Document, Object, Stream, dictionary};

use super::support::*;

const LIBRARY: &str = "/api/attachments/library";
const DOCX: &str = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

/// A one-page PDF showing `line` in Helvetica, built with lopdf.
fn pdf(line: &str) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font",
        "Subtype" => "Type1",
        "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    let resources_id = doc.add_object(dictionary! {
        "Font" => dictionary! { "F1" => font_id },
    });
    let content = Content {
        operations: vec![
            Operation::new("BT", vec![]),
            Operation::new("Tf", vec!["F1".into(), 24.into()]),
            Operation::new("Td", vec![72.into(), 700.into()]),
            Operation::new("Tj", vec![Object::string_literal(line)]),
            Operation::new("ET", vec![]),
        ],
    };
    let content_id = doc.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
    let page_id = doc.add_object(dictionary! {
        "Type" => "Page",
        "Parent" => pages_id,
        "Contents" => content_id,
    });
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages",
            "Kids" => vec![page_id.into()],
            "Count" => 1,
            "Resources" => resources_id,
            "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        }),
    );
    let catalog_id = doc.add_object(dictionary! {"Type" => "Catalog", "Pages" => pages_id});
    doc.trailer.set("Root", catalog_id);
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

/// A PDF whose one Flate stream inflates to 64 MiB of zeros (about 64 KiB).
fn pdf_bomb() -> Vec<u8> {
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; 1024 * 1024];
    for _ in 0..64 {
        encoder.write_all(&zeros).unwrap();
    }
    let data = encoder.finish().unwrap();
    let mut out = b"%PDF-1.5\n1 0 obj\n<< /Length ".to_vec();
    out.extend_from_slice(format!("{} /Filter /FlateDecode >>\nstream\n", data.len()).as_bytes());
    out.extend_from_slice(&data);
    out.extend_from_slice(b"\nendstream\nendobj\ntrailer\n<< >>\n%%EOF\n");
    out
}

/// A DOCX with two paragraphs, the second with a tab and an entity.
fn docx() -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file("[Content_Types].xml", stored).unwrap();
    zip.write_all(b"<?xml version=\"1.0\"?><Types/>").unwrap();
    zip.start_file("word/document.xml", stored).unwrap();
    zip.write_all(
        br#"<?xml version="1.0" encoding="UTF-8"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>
<w:p><w:r><w:t>Quarterly</w:t></w:r><w:r><w:t xml:space="preserve"> report</w:t></w:r></w:p>
<w:p><w:r><w:t>Sales</w:t><w:tab/><w:t>R&amp;D</w:t></w:r></w:p>
</w:body></w:document>"#,
    )
    .unwrap();
    zip.finish().unwrap().into_inner()
}

async fn content_of<S: stoa_testkit::AppService>(
    h: &Harness<S>,
    token: &str,
    id: &str,
) -> serde_json::Value {
    let res = h.app.send(get(&format!("{LIBRARY}/{id}"), token)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    res.json()["item"]["content"].clone()
}

#[actix_web::test]
async fn pdf_and_docx_text_is_extracted_and_bombs_get_none() {
    let h = start_default().await;
    let acme = seed(h.db(), "Acme", "acme.com").await;
    let admin = token_for(h.db(), acme.admin).await;

    let id = uploaded(
        &h,
        &admin,
        form(
            "x:y",
            "r",
            "brief.pdf",
            "application/pdf",
            &pdf("Hello from stoa"),
        ),
    )
    .await;
    let text = content_of(&h, &admin, &id).await;
    assert!(
        text.as_str().unwrap_or("").contains("Hello from stoa"),
        "{text}"
    );

    let id = uploaded(&h, &admin, form("x:y", "r", "plan.docx", DOCX, &docx())).await;
    assert_eq!(
        content_of(&h, &admin, &id).await,
        "Quarterly report\nSales\tR&D"
    );

    // Stored, without text: the 64 MiB stream is over the bound.
    let id = uploaded(
        &h,
        &admin,
        form("x:y", "r", "bomb.pdf", "application/pdf", &pdf_bomb()),
    )
    .await;
    assert_eq!(content_of(&h, &admin, &id).await, serde_json::Value::Null);

    // Not a PDF inside: stored, no text, no error.
    let id = uploaded(
        &h,
        &admin,
        form(
            "x:y",
            "r",
            "broken.pdf",
            "application/pdf",
            b"%PDF-1.4 garbage",
        ),
    )
    .await;
    assert_eq!(content_of(&h, &admin, &id).await, serde_json::Value::Null);
}
