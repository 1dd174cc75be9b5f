//! Where glTF bytes come from: the GLB container and buffer URIs.
//!
//! Follows glTF 2.0 §4 (GLB File Format: 12-byte header, a JSON chunk first, an optional BIN
//! chunk second, unknown chunks ignored), §3.6.1.2 (the GLB-stored buffer is `buffers[0]`
//! without a `uri`), §3.6.1.1 (a buffer's data must be at least `byteLength` bytes) and §2.8
//! (URIs: base64 `data:` URIs and percent-encoded relative paths).
//!
//! Every length read from the file is checked before it is used to slice, so a truncated or
//! lying container is an error, never a panic. Buffers are returned truncated to their declared
//! `byteLength`, so later bounds checks against the buffer agree with the JSON.

use std::path::Path;

use ::gltf::json;

use crate::error::{Problem, invalid};

const GLB_MAGIC: &[u8; 4] = b"glTF";
const CHUNK_JSON: u32 = 0x4E4F_534A;
const CHUNK_BIN: u32 = 0x004E_4942;

/// The two parts of a glTF file: its JSON text and, for GLB, the BIN chunk.
pub(crate) struct Container<'a> {
    pub json: &'a [u8],
    pub bin: Option<&'a [u8]>,
}

/// Splits a `.glb` into JSON and BIN chunks, or passes a `.gltf`'s JSON text through.
/// The format is recognised by the magic bytes, not the file extension.
pub(crate) fn split(bytes: &[u8]) -> Result<Container<'_>, Problem> {
    if !bytes.starts_with(GLB_MAGIC) {
        return Ok(Container {
            json: bytes,
            bin: None,
        });
    }
    let format = |m: String| Problem::Format(format!("GLB container: {m}"));
    let word = |at: usize| -> Option<u32> {
        let b = bytes.get(at..at.checked_add(4)?)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let (Some(version), Some(length)) = (word(4), word(8)) else {
        return Err(format(format!(
            "file is {} bytes, shorter than the 12-byte header",
            bytes.len()
        )));
    };
    if version != 2 {
        return Err(Problem::Unsupported(format!(
            "GLB container version {version} (rastra reads version 2)"
        )));
    }
    let length = length as usize;
    if length > bytes.len() || length < 12 {
        return Err(format(format!(
            "header says the file is {length} bytes, but it is {} bytes",
            bytes.len()
        )));
    }
    let bytes = &bytes[..length];

    let mut json = None;
    let mut bin = None;
    let mut at = 12;
    let mut chunk_number = 0;
    while at < length {
        let (Some(chunk_length), Some(chunk_type)) = (word(at), word(at + 4)) else {
            return Err(format(format!(
                "chunk {chunk_number} header at byte {at} runs past the end of the file"
            )));
        };
        let start = at + 8;
        let end = start
            .checked_add(chunk_length as usize)
            .filter(|&end| end <= length)
            .ok_or_else(|| {
                format(format!(
                    "chunk {chunk_number} at byte {at} claims {chunk_length} bytes, past the end of \
                     the {length}-byte file"
                ))
            })?;
        let data = &bytes[start..end];
        match (chunk_number, chunk_type) {
            (0, CHUNK_JSON) => json = Some(data),
            (0, other) => {
                return Err(format(format!(
                    "first chunk must be JSON (0x{CHUNK_JSON:08X}), found type 0x{other:08X}"
                )));
            }
            (1, CHUNK_BIN) => bin = Some(data),
            // §4.4.3.1: client implementations MUST ignore chunks with unknown types.
            _ => {}
        }
        chunk_number += 1;
        // Chunks are 4-byte aligned; tolerate writers that forgot the padding at the very end.
        at = end.div_ceil(4) * 4;
    }
    let json = json.ok_or_else(|| format("no JSON chunk".to_string()))?;
    Ok(Container { json, bin })
}

/// Loads every buffer of the document: the GLB BIN chunk, `data:` URIs, or files relative to
/// `base_dir`. Each buffer is truncated to its `byteLength`.
pub(crate) fn load_buffers(
    root: &json::Root,
    bin: Option<&[u8]>,
    base_dir: &Path,
) -> Result<Vec<Vec<u8>>, Problem> {
    let mut buffers = Vec::with_capacity(root.buffers.len());
    for (index, buffer) in root.buffers.iter().enumerate() {
        let declared = usize::try_from(buffer.byte_length.0).unwrap_or(usize::MAX);
        let place = || match &buffer.uri {
            Some(uri) if uri.starts_with("data:") => format!("buffer {index} (data: URI)"),
            Some(uri) => format!("buffer {index} ({uri:?})"),
            None => format!("buffer {index} (GLB BIN chunk)"),
        };
        let mut data = match (&buffer.uri, bin) {
            (Some(uri), _) => read_uri(uri, base_dir).map_err(|p| p.context(place()))?,
            (None, Some(bin)) if index == 0 => bin.to_vec(),
            (None, _) if index == 0 => {
                return invalid!("buffer 0 has no uri and the file has no GLB BIN chunk");
            }
            (None, _) => {
                return invalid!(
                    "buffer {index} has no uri; only buffer 0 may refer to the GLB BIN chunk"
                );
            }
        };
        if data.len() < declared {
            return invalid!(
                "{}: holds {} bytes but byteLength is {declared}",
                place(),
                data.len()
            );
        }
        data.truncate(declared);
        buffers.push(data);
    }
    Ok(buffers)
}

/// Reads the bytes a buffer URI refers to.
pub(crate) fn read_uri(uri: &str, base_dir: &Path) -> Result<Vec<u8>, Problem> {
    if let Some(rest) = uri.strip_prefix("data:") {
        let Some((_media_type, payload)) = rest.split_once(";base64,") else {
            return Err(Problem::Unsupported(
                "data: URI without base64 encoding".to_string(),
            ));
        };
        return decode_base64(payload)
            .map_err(|m| Problem::Invalid(format!("data: URI is not valid base64: {m}")));
    }
    if let Some(scheme) = uri_scheme(uri) {
        return Err(Problem::Unsupported(format!(
            "URI scheme {scheme:?} (only relative paths and data: URIs are read)"
        )));
    }
    let relative = percent_decode(uri).map_err(Problem::Invalid)?;
    let path = base_dir.join(relative);
    std::fs::read(&path)
        .map_err(|e| Problem::Invalid(format!("cannot read {}: {e}", path.display())))
}

/// The scheme of an absolute URI (`http`, `file`, ...), per RFC 3986 §3.1; `None` for a path.
fn uri_scheme(uri: &str) -> Option<&str> {
    let (scheme, _) = uri.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    let valid = first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    // A one-letter "scheme" is a Windows drive letter (`C:/...`), i.e. a path.
    (valid && scheme.len() > 1).then_some(scheme)
}

/// Decodes `%XX` escapes (RFC 3986 §2.1); the result must be UTF-8.
fn percent_decode(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad percent-escape at byte {i} of URI {text:?}"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("URI {text:?} does not decode to UTF-8"))
}

/// Standard base64 (RFC 4648 §4) with optional `=` padding; whitespace is not allowed.
fn decode_base64(text: &str) -> Result<Vec<u8>, String> {
    fn sextet(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    let body = text.trim_end_matches('=');
    if text.len() - body.len() > 2 || body.len() % 4 == 1 {
        return Err(format!(
            "length {} is not a whole number of bytes",
            text.len()
        ));
    }
    let mut out = Vec::with_capacity(body.len() / 4 * 3 + 2);
    for (group_index, group) in body.as_bytes().chunks(4).enumerate() {
        let mut bits = 0u32;
        for (i, &c) in group.iter().enumerate() {
            let value = sextet(c).ok_or_else(|| {
                format!(
                    "character {:?} at offset {}",
                    c as char,
                    group_index * 4 + i
                )
            })?;
            bits |= value << (18 - 6 * i);
        }
        let [_, a, b, c] = bits.to_be_bytes();
        out.extend_from_slice(&[a, b, c][..group.len() - 1]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_known_vectors() {
        // RFC 4648 §10 test vectors.
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(decode_base64(encoded).unwrap(), plain.as_bytes());
            assert_eq!(
                decode_base64(encoded.trim_end_matches('=')).unwrap(),
                plain.as_bytes()
            );
        }
        assert!(decode_base64("Zm9v!").is_err());
        assert!(decode_base64("Z").is_err());
        assert!(decode_base64("Zg===").is_err());
    }

    #[test]
    fn percent_decoding_and_schemes() {
        assert_eq!(percent_decode("a%20b.bin").unwrap(), "a b.bin");
        assert_eq!(
            percent_decode("grande_sph%C3%A8re.png").unwrap(),
            "grande_sphère.png"
        );
        assert!(percent_decode("bad%2").is_err());
        assert!(percent_decode("bad%zz").is_err());
        assert!(percent_decode("%FF").is_err());
        assert_eq!(uri_scheme("http://x/y.bin"), Some("http"));
        assert_eq!(uri_scheme("file:///tmp/a.bin"), Some("file"));
        assert_eq!(uri_scheme("C:/models/a.bin"), None);
        assert_eq!(uri_scheme("dir/a.bin"), None);
    }

    #[test]
    fn glb_lengths_are_checked_not_trusted() {
        let mut glb = Vec::new();
        glb.extend_from_slice(b"glTF");
        glb.extend_from_slice(&2u32.to_le_bytes());
        glb.extend_from_slice(&24u32.to_le_bytes());
        glb.extend_from_slice(&4u32.to_le_bytes());
        glb.extend_from_slice(&CHUNK_JSON.to_le_bytes());
        glb.extend_from_slice(b"{}  ");
        let ok = split(&glb).unwrap();
        assert_eq!(ok.json, b"{}  ");
        assert!(ok.bin.is_none());

        let mut lying = glb.clone();
        lying[12..16].copy_from_slice(&1000u32.to_le_bytes());
        assert!(matches!(split(&lying), Err(Problem::Format(_))));
        let mut short_header = glb.clone();
        short_header[8..12].copy_from_slice(&4u32.to_le_bytes());
        assert!(matches!(split(&short_header), Err(Problem::Format(_))));
        assert!(matches!(split(&glb[..10]), Err(Problem::Format(_))));
        let mut v1 = glb.clone();
        v1[4] = 1;
        assert!(matches!(split(&v1), Err(Problem::Unsupported(_))));
    }
}
