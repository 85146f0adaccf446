//! The SimGrid worker of hetbal: `hetbal-simgrid worker` reads one request (JSON)
//! on its standard input, runs it under SimGrid and writes the answer (JSON) on
//! its standard output. Started by `hetbal_simgrid::Worker`, one process per
//! simulation.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() == 1 && args[0] == "worker" {
        std::process::exit(hetbal_simgrid::worker_main());
    }
    eprintln!(
        "usage: hetbal-simgrid worker\n\nThe SimGrid worker of hetbal: reads a request (JSON) on the standard input and writes the answer on the standard output. Use `hetbal replay` to replay a plan."
    );
    std::process::exit(2);
}
