use super::*;

fn ring(current: u8, previous: &[u8]) -> KeyRing {
    let prev: Vec<[u8; 32]> = previous.iter().map(|b| [*b; 32]).collect();
    KeyRing::new(&[current; 32], &prev)
}

const HERE: Binding<'static> = Binding {
    purpose: "tests.secret",
    tenant: uuid::Uuid::nil(),
    record: "r1",
};

#[test]
fn values_round_trip_and_never_contain_the_plaintext() {
    let keys = ring(1, &[]);
    let stored = keys.encrypt("device-token-123", &HERE).unwrap_or_default();
    assert!(stored.starts_with(PREFIX));
    assert!(!stored.contains("device-token-123"));
    assert_eq!(keys.decrypt(&stored, &HERE), Ok("device-token-123".into()));
    assert_ne!(
        keys.encrypt("device-token-123", &HERE).ok(),
        Some(stored.clone())
    );
    assert!(keys.is_current(&stored));
}

#[test]
fn a_value_is_bound_to_its_tenant_and_record() {
    let keys = ring(1, &[]);
    let stored = keys.encrypt("secret", &HERE).unwrap_or_default();
    let other_record = Binding {
        record: "r2",
        ..HERE
    };
    let other_tenant = Binding {
        tenant: uuid::Uuid::from_u128(1),
        ..HERE
    };
    let other_purpose = Binding {
        purpose: "tests.other",
        ..HERE
    };
    for elsewhere in [other_record, other_tenant, other_purpose] {
        assert_eq!(
            keys.decrypt(&stored, &elsewhere),
            Err(CryptoError::Tampered)
        );
    }
}

#[test]
fn rotation_keeps_old_values_readable_and_writes_with_the_new_key() {
    let old = ring(1, &[]);
    let stored = old.encrypt("secret", &HERE).unwrap_or_default();
    let rotated = ring(2, &[1]);
    assert_eq!(rotated.decrypt(&stored, &HERE), Ok("secret".into()));
    assert!(!rotated.is_current(&stored));
    let fresh = rotated.encrypt("secret", &HERE).unwrap_or_default();
    assert!(fresh.starts_with(&format!("{PREFIX}{}:", rotated.current_id())));
    assert_ne!(old.current_id(), rotated.current_id());
    // Without the old key, the old value is refused by name.
    let forgotten = ring(2, &[]);
    assert_eq!(
        forgotten.decrypt(&stored, &HERE),
        Err(CryptoError::UnknownKey(old.current_id().to_string()))
    );
    // Lookups: the old hash is among the rotated ring's candidates.
    assert!(
        rotated
            .lookup_hashes("secret")
            .contains(&old.lookup_hash("secret"))
    );
    assert_eq!(
        rotated.lookup_hashes("secret")[0],
        rotated.lookup_hash("secret")
    );
}

#[test]
fn legacy_values_decrypt_until_refused_and_tampering_fails() {
    let keys = ring(3, &[]);
    let unbound = keys.encrypt_legacy("old").unwrap_or_default();
    assert!(unbound.starts_with(LEGACY_PREFIX));
    assert_eq!(keys.decrypt("plain-token", &HERE), Ok("plain-token".into()));
    assert_eq!(keys.decrypt(&unbound, &HERE), Ok("old".into()));
    assert!(!keys.is_current("plain-token") && !keys.is_current(&unbound));
    let stored = keys.encrypt("x", &HERE).unwrap_or_default();
    let mut tampered = stored.clone();
    tampered.pop();
    tampered.push(if stored.ends_with('A') { 'B' } else { 'A' });
    assert!(keys.decrypt(&tampered, &HERE).is_err());
    assert_eq!(
        keys.decrypt("enc:v2:nokey", &HERE),
        Err(CryptoError::Malformed)
    );
    // Once the re-encryption pass has run, legacy values are refused;
    // bound ones still decrypt.
    keys.refuse_legacy();
    assert_eq!(keys.decrypt("plain-token", &HERE), Err(CryptoError::Legacy));
    assert_eq!(keys.decrypt(&unbound, &HERE), Err(CryptoError::Legacy));
    assert_eq!(keys.decrypt(&stored, &HERE), Ok("x".into()));
}

#[test]
fn keys_parse_as_base64_or_hex_and_must_be_32_bytes() {
    let hex_key = "00".repeat(32);
    assert_eq!(parse_key(&hex_key), Ok([0u8; 32]));
    let b64 = STANDARD.encode([7u8; 32]);
    assert_eq!(parse_key(&b64), Ok([7u8; 32]));
    assert_eq!(parse_key(b64.trim_end_matches('=')), Ok([7u8; 32]));
    assert!(parse_key("short").is_err());
    assert!(parse_key(&STANDARD.encode([1u8; 16])).is_err());
    assert!(generate_key().is_ok_and(|k| parse_key(&k).is_ok()));
}

#[test]
fn production_requires_a_key_development_generates_one() {
    let vars = |pairs: &[(&str, &str)]| -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let err = KeyRing::from_vars(&vars(&[])).err().map(|e| e.var);
    assert_eq!(err, Some(KEY_VAR));
    let dev = KeyRing::from_vars(&vars(&[("STOA_ENV", "development")]));
    assert!(dev.is_ok_and(|(_, generated)| generated));
    let key = STANDARD.encode([9u8; 32]);
    let set = KeyRing::from_vars(&vars(&[(KEY_VAR, &key), (OLD_KEYS_VAR, "bad")]));
    assert_eq!(set.err().map(|e| e.var), Some(OLD_KEYS_VAR));
    let old = hex::encode([8u8; 32]);
    let ok = KeyRing::from_vars(&vars(&[(KEY_VAR, &key), (OLD_KEYS_VAR, &old)]));
    assert!(ok.is_ok_and(|(ring, generated)| !generated && ring.previous.len() == 1));
    assert!(!format!("{:?}", ring(1, &[])).contains("cipher"));
}
