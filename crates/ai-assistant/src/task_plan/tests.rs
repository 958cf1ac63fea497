use super::*;

#[test]
fn labels_are_humanized_and_capped() {
    assert_eq!(
        label("customers__update_deal_stage"),
        "Customers · Update deal stage"
    );
    assert_eq!(label("search"), "Search");
    assert_eq!(label(""), "Tool call");
    let huge = format!("module__{}end", "segment_".repeat(40));
    assert!(label(&huge).chars().count() <= 80);
}

#[test]
fn runtime_tasks_snapshot_then_update() {
    let mut plan = TaskPlan::new(uuid::Uuid::nil());
    let first = plan.running("c1", "customers__get_deal", None);
    assert_eq!(first[0]["type"], "data-agent-task-plan");
    assert_eq!(first[0]["tasks"][0]["state"], "running");
    assert_eq!(first[0]["tasks"][0]["detail"], "customers.get_deal");
    let again = plan.running("c1", "customers__get_deal", Some(&json!({})));
    assert_eq!(again[0]["type"], "data-agent-task-update");
    let done = plan.finished("c1", true);
    assert_eq!(done[0]["task"]["state"], "done");
    // A terminal state stays.
    let late = plan.running("c1", "customers__get_deal", Some(&json!({})));
    assert_eq!(late[0]["task"]["state"], "done");
    let second = plan.running("c2", "customers__get_deal", None);
    assert_eq!(second[0]["type"], "data-agent-task-update");
    assert_eq!(plan.finished("c2", false)[0]["task"]["state"], "failed");
}

#[test]
fn agent_plans_are_cleaned_and_advanced_by_their_tools() {
    let mut plan = TaskPlan::new(uuid::Uuid::nil());
    assert!(plan.running("p", "meta__update_task_plan", None).is_empty());
    let frames = plan.running(
        "p",
        "meta__update_task_plan",
        Some(&json!({"tasks": [
            {"id": "look", "label": "Look at the deal", "toolName": "customers.get_deal"},
            {"label": "<thinking>secret</thinking>"},
            {"label": "  Summarize\n it  "},
        ]})),
    );
    assert_eq!(frames[0]["type"], "data-agent-task-plan");
    let tasks = frames[0]["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 2);
    assert_eq!(tasks[0]["source"], "agent");
    assert_eq!(tasks[0]["state"], "pending");
    assert_eq!(tasks[1]["id"], "agent-plan-3");
    assert_eq!(tasks[1]["label"], "Summarize it");
    assert!(plan.finished("p", true).is_empty());
    let running = plan.running("c1", "customers__get_deal", None);
    assert_eq!(running[0]["task"]["id"], "look");
    assert_eq!(running[0]["task"]["toolCallId"], "c1");
    assert_eq!(plan.finished("c1", true)[0]["task"]["state"], "done");
}
