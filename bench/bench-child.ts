import { fork, type ChildProcess } from "node:child_process";

/**
 * A bench's child process (a compiled server or load generator) spoken to over IPC, one request and one answer
 * at a time: forked on plain node (not the bench's tsx loader, as the server is deployed), its first message
 * awaited, then asked (`"cpu"`, `"indexed"`, ...) and stopped (`"stop"`, then its exit). A child that exits
 * while an answer is awaited fails the wait instead of leaving it hanging.
 */
export class BenchChild {
  private constructor(private readonly proc: ChildProcess) {}

  /** Forks `file` (compiled JavaScript) and waits for its first message. */
  static async fork(file: string, args: string[], execArgv: string[] = []): Promise<{ child: BenchChild; hello: Record<string, unknown> }> {
    const proc = fork(file, args, { execArgv, stdio: ["ignore", "inherit", "inherit", "ipc"] });
    const child = new BenchChild(proc);
    return { child, hello: await child.next() };
  }

  /** The child's next message. */
  next(): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`child exited with ${code}`));
      this.proc.once("exit", onExit);
      this.proc.once("message", (m) => {
        this.proc.off("exit", onExit);
        resolve(m as Record<string, unknown>);
      });
    });
  }

  /** Sends `msg` and waits for the answer. */
  ask(msg: unknown): Promise<Record<string, unknown>> {
    const answer = this.next();
    this.proc.send(msg as string);
    return answer;
  }

  /** The child's own CPU time so far (user and system, microseconds): it answers `"cpu"` with its `process.cpuUsage()`. */
  async cpuMicros(): Promise<number> {
    const { cpu } = (await this.ask("cpu")) as { cpu: NodeJS.CpuUsage };
    return cpu.user + cpu.system;
  }

  /** Sends `"stop"` and waits for the child to exit. */
  async stop(): Promise<void> {
    const exited = new Promise((resolve) => this.proc.once("exit", resolve));
    this.proc.send("stop");
    await exited;
  }
}
