use super::*;

#[test]
fn openai_chunks_become_deltas() {
    let d =
        openai_deltas(r#"{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}"#);
    assert_eq!(d.ok(), Some(vec![Delta::Text("Hi".into())]));
    let d = openai_deltas(
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"a__b","arguments":"{\"x\""}}]},"finish_reason":"tool_calls"}]}"#,
    );
    assert_eq!(
        d.ok(),
        Some(vec![
            Delta::ToolStart {
                index: 0,
                id: "c1".into(),
                name: "a__b".into()
            },
            Delta::ToolArgs {
                index: 0,
                delta: "{\"x\"".into()
            },
            Delta::Finish("tool_calls".into()),
        ])
    );
    let d = openai_deltas(r#"{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}"#);
    assert_eq!(
        d.ok(),
        Some(vec![Delta::Usage {
            input: 3,
            output: 4
        }])
    );
    assert!(openai_deltas("nope").is_err());
}

#[test]
fn anthropic_events_become_deltas() {
    let d = anthropic_deltas(
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Yo"}}"#,
    );
    assert_eq!(d.ok(), Some(vec![Delta::Text("Yo".into())]));
    let d = anthropic_deltas(
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":7}}"#,
    );
    assert_eq!(
        d.ok(),
        Some(vec![
            Delta::Usage {
                input: 0,
                output: 7
            },
            Delta::Finish("tool_calls".into())
        ])
    );
}

#[test]
fn events_split_across_chunks() {
    let mut buf = b"data: {\"a\":1}\n\ndata: [DO".to_vec();
    assert_eq!(take_events(&mut buf), vec!["{\"a\":1}".to_string()]);
    buf.extend_from_slice(b"NE]\n\n");
    assert_eq!(take_events(&mut buf), vec!["[DONE]".to_string()]);
}
