//! The gpucast-bench binary: a closed stdout ends quietly.

use std::process::{Command, Stdio};

#[test]
fn list_into_a_closed_pipe_exits_0() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpucast-bench"))
        .args(["list", "--configs"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run gpucast-bench");
    drop(child.stdout.take());
    let o = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.is_empty(), "{err}");
}
