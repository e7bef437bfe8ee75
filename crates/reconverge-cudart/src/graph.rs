//! CUDA graphs: nodes of work with dependencies between them, executable graphs, and the handles that
//! name them (`cudaGraph_t`, `cudaGraphNode_t`, `cudaGraphExec_t`).
//!
//! A graph is its nodes in creation order, each with the nodes it depends on. Instantiating it fixes the
//! order its work runs in ([`Graph::plan`]): a deterministic topological order, every node after all of
//! its dependencies and, among the nodes ready at once, the one created first (CUDA runs independent
//! nodes concurrently; this runtime runs everything in order, so one valid order is chosen and kept). A
//! child graph is copied into its node when the node is created, as CUDA does ("The node executes an
//! embedded child graph. The child graph is cloned in this call", CUDA Runtime API, Graph Management,
//! `cudaGraphAddChildGraphNode`), and its work is run in place of the node. A kernel node holds the
//! parameter buffer of its launch, filled when the node is created ("The kernelParams or extra array, as
//! well as the argument values it points to, are copied during this call", `cudaGraphAddKernelNode`), and
//! is launched through the same path as `<<<...>>>` ([`crate::runtime::Runtime::launch`]): every kernel
//! node run is one launch with its statistics line.
//!
//! Stream capture ([`crate::capture`]) builds graphs of the same nodes.

use crate::api::pitched::CudaMemcpy3DParms;
use crate::error::{self as cuda, CudaError};
use crate::launch::ParamLayout;
use crate::runtime::CallConfig;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::ffi::c_void;

/// A host function of a host node (`cudaHostFn_t`).
pub type HostFunc = unsafe extern "C" fn(user_data: *mut c_void);

/// A kernel launch a node holds.
#[derive(Clone, Debug)]
pub struct KernelWork {
    /// The kernel's host stub.
    pub func: u64,
    /// Its geometry and dynamic shared memory (the stream is the one the graph is launched on).
    pub call: CallConfig,
    /// The parameter buffer, filled from the arguments when the node was created.
    pub params: Vec<u8>,
    /// Each parameter's offset in `params`.
    pub offsets: Vec<usize>,
    /// `kernelParams` as `cudaGraphKernelNodeGetParams` hands it out: a pointer into `params` for each
    /// parameter (filled when asked for).
    pub arg_ptrs: Vec<u64>,
}

impl KernelWork {
    /// The launch of host stub `func` under `call` with the parameter buffer `params`, laid out as
    /// `layout` says.
    pub fn new(func: u64, call: CallConfig, params: Vec<u8>, layout: &ParamLayout) -> KernelWork {
        let offsets = layout.params.iter().map(|&(offset, _)| offset).collect();
        KernelWork { func, call, params, offsets, arg_ptrs: Vec::new() }
    }
}

/// A copy a node holds.
#[derive(Clone, Copy, Debug)]
pub enum CopyWork {
    /// `cudaGraphAddMemcpyNode1D`, or `cudaMemcpyAsync` captured: `len` bytes, as the raw
    /// `cudaMemcpyKind` says.
    Linear {
        /// Destination.
        dst: u64,
        /// Source.
        src: u64,
        /// Bytes.
        len: u64,
        /// `cudaMemcpyKind`.
        kind: i32,
    },
    /// `cudaGraphAddMemcpyNode`: a 3-D copy between pitched pointers and CUDA arrays.
    Parms(CudaMemcpy3DParms),
}

/// A set a node holds (`cudaMemsetParams`): `height` rows of `width` elements of `element` bytes (1, 2
/// or 4), `pitch` bytes apart, each element `value` (its low `element` bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetWork {
    /// The first byte.
    pub dst: u64,
    /// Bytes from one row to the next.
    pub pitch: u64,
    /// The value of each element.
    pub value: u32,
    /// Bytes per element.
    pub element: u32,
    /// Elements per row.
    pub width: u64,
    /// Rows.
    pub height: u64,
}

/// A host function call a node holds.
#[derive(Clone, Copy, Debug)]
pub struct HostWork {
    /// The function.
    pub func: HostFunc,
    /// Its argument (the program's pointer).
    pub data: u64,
}

/// What a node does.
#[derive(Clone, Debug)]
pub enum Work {
    /// Launches a kernel.
    Kernel(KernelWork),
    /// Copies memory.
    Copy(CopyWork),
    /// Sets memory.
    Set(SetWork),
    /// Calls a host function.
    Host(HostWork),
    /// Nothing (a node that only orders others).
    Empty,
    /// Records an event (`cudaEventRecordWithFlags(..., cudaEventRecordExternal)` captured).
    Record(u64),
    /// Waits for an event (`cudaStreamWaitEvent(..., cudaEventWaitExternal)` captured): already complete.
    Wait(u64),
    /// A child graph's work, in the order it runs (copied when the node was created).
    Child(Vec<Work>),
}

impl Work {
    /// The node's `cudaGraphNodeType`.
    pub fn node_type(&self) -> i32 {
        match self {
            Work::Kernel(_) => 0,
            Work::Copy(_) => 1,
            Work::Set(_) => 2,
            Work::Host(_) => 3,
            Work::Child(_) => 4,
            Work::Empty => 5,
            Work::Wait(_) => 6,
            Work::Record(_) => 7,
        }
    }

    /// Appends this work to `out`, a child graph's work in its place.
    fn flatten_into(self, node: Option<u64>, out: &mut Vec<Step>) {
        match self {
            Work::Child(works) => works.into_iter().for_each(|w| w.flatten_into(None, out)),
            work => out.push(Step { node, work }),
        }
    }
}

/// One node of a graph.
#[derive(Clone, Debug)]
pub struct Node {
    /// Its handle (`cudaGraphNode_t`).
    pub handle: u64,
    /// What it does.
    pub work: Work,
    /// The nodes (of the same graph) it depends on, in the order they were added.
    pub deps: Vec<u64>,
}

/// A graph: its nodes in creation order.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    /// The nodes, in the order they were created.
    pub nodes: Vec<Node>,
}

impl Graph {
    /// The position of node `handle`.
    pub fn index(&self, handle: u64) -> Option<usize> {
        self.nodes.iter().position(|n| n.handle == handle)
    }

    /// The order the nodes run in, as positions: every node after all of its dependencies; among nodes
    /// ready together, the one created first. A cycle is `cudaErrorInvalidValue` (the graph fails
    /// instantiation's validation).
    pub fn order(&self) -> Result<Vec<usize>, CudaError> {
        let at: HashMap<u64, usize> = self.nodes.iter().enumerate().map(|(i, n)| (n.handle, i)).collect();
        let mut waiting: Vec<usize> = self.nodes.iter().map(|n| n.deps.len()).collect();
        let mut dependents = vec![Vec::new(); self.nodes.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            for d in &n.deps {
                dependents[*at.get(d).ok_or(cuda::INVALID_VALUE)?].push(i);
            }
        }
        let mut ready: BinaryHeap<Reverse<usize>> =
            (0..self.nodes.len()).filter(|&i| waiting[i] == 0).map(Reverse).collect();
        let mut order = Vec::with_capacity(self.nodes.len());
        while let Some(Reverse(i)) = ready.pop() {
            order.push(i);
            for &j in &dependents[i] {
                waiting[j] -= 1;
                if waiting[j] == 0 {
                    ready.push(Reverse(j));
                }
            }
        }
        if order.len() == self.nodes.len() {
            Ok(order)
        } else {
            Err(cuda::INVALID_VALUE)
        }
    }

    /// The work of an instantiation, in the order it runs ([`Graph::order`]), child graphs' work in
    /// place of their nodes.
    pub fn plan(&self) -> Result<Vec<Step>, CudaError> {
        let mut steps = Vec::new();
        for i in self.order()? {
            let n = &self.nodes[i];
            n.work.clone().flatten_into(Some(n.handle), &mut steps);
        }
        Ok(steps)
    }

    /// The nodes without dependencies, in creation order.
    pub fn roots(&self) -> Vec<u64> {
        self.nodes.iter().filter(|n| n.deps.is_empty()).map(|n| n.handle).collect()
    }

    /// Whether node `from` is `to` or one of its dependencies, directly or not.
    pub fn reaches(&self, from: u64, to: u64) -> bool {
        let mut stack = vec![to];
        let mut seen = Vec::new();
        while let Some(n) = stack.pop() {
            if n == from {
                return true;
            }
            if !seen.contains(&n) {
                seen.push(n);
                stack.extend(self.index(n).map(|i| self.nodes[i].deps.clone()).unwrap_or_default());
            }
        }
        false
    }
}

/// One piece of an executable graph's work.
#[derive(Clone, Debug)]
pub struct Step {
    /// The node of the instantiated graph it came from (`None` for the work of a child graph).
    pub node: Option<u64>,
    /// What it does.
    pub work: Work,
}

/// An executable graph (`cudaGraphExec_t`): the work of its graph at instantiation, in order.
#[derive(Clone, Debug)]
pub struct Exec {
    /// The work.
    pub steps: Vec<Step>,
}

/// The first handle of a graph, node or executable graph: far from the handles of streams and events.
const FIRST_HANDLE: u64 = 0x6772_0000_0000;

/// The graphs, nodes and executable graphs of the process, and its stream captures.
#[derive(Debug)]
pub struct Graphs {
    graphs: BTreeMap<u64, Graph>,
    execs: BTreeMap<u64, Exec>,
    /// The graph each node belongs to.
    owner: HashMap<u64, u64>,
    next: u64,
    /// Stream captures in progress.
    pub captures: crate::capture::Captures,
}

impl Default for Graphs {
    fn default() -> Graphs {
        Graphs {
            graphs: BTreeMap::new(),
            execs: BTreeMap::new(),
            owner: HashMap::new(),
            next: FIRST_HANDLE,
            captures: Default::default(),
        }
    }
}

impl Graphs {
    /// A fresh handle.
    fn handle(&mut self) -> u64 {
        self.next += 0x10;
        self.next
    }

    /// `cudaGraphCreate`: an empty graph; its handle.
    pub fn create(&mut self) -> u64 {
        let h = self.handle();
        self.graphs.insert(h, Graph::default());
        h
    }

    /// `cudaGraphDestroy`: the graph and its nodes. An unknown graph, or one a stream is capturing into,
    /// is `cudaErrorInvalidValue`.
    pub fn destroy(&mut self, graph: u64) -> Result<(), CudaError> {
        if self.captures.capturing_into(graph) {
            return Err(cuda::INVALID_VALUE);
        }
        self.remove(graph)
    }

    /// Removes a graph and its nodes' handles.
    pub(crate) fn remove(&mut self, graph: u64) -> Result<(), CudaError> {
        let g = self.graphs.remove(&graph).ok_or(cuda::INVALID_VALUE)?;
        g.nodes.iter().for_each(|n| {
            self.owner.remove(&n.handle);
        });
        Ok(())
    }

    /// Graph `graph`; `cudaErrorInvalidValue` for a handle that names none.
    pub fn graph(&self, graph: u64) -> Result<&Graph, CudaError> {
        self.graphs.get(&graph).ok_or(cuda::INVALID_VALUE)
    }

    /// Adds a node doing `work` to `graph`, after `deps` (nodes of that graph, each once); its handle.
    pub fn add(&mut self, graph: u64, deps: &[u64], work: Work) -> Result<u64, CudaError> {
        let g = self.graphs.get(&graph).ok_or(cuda::INVALID_VALUE)?;
        let duplicate = deps.iter().enumerate().any(|(i, d)| deps[..i].contains(d));
        if duplicate || deps.iter().any(|d| g.index(*d).is_none()) {
            return Err(cuda::INVALID_VALUE);
        }
        let handle = self.handle();
        let node = Node { handle, work, deps: deps.to_vec() };
        self.graphs.get_mut(&graph).ok_or(cuda::INVALID_VALUE)?.nodes.push(node);
        self.owner.insert(handle, graph);
        Ok(handle)
    }

    /// Node `node` and its graph's handle; `cudaErrorInvalidValue` for a handle that names none.
    pub fn node(&self, node: u64) -> Result<(&Node, u64), CudaError> {
        let graph = *self.owner.get(&node).ok_or(cuda::INVALID_VALUE)?;
        let g = self.graph(graph)?;
        Ok((&g.nodes[g.index(node).ok_or(cuda::INVALID_VALUE)?], graph))
    }

    /// Node `node`, for writing.
    pub fn node_mut(&mut self, node: u64) -> Result<&mut Node, CudaError> {
        let graph = *self.owner.get(&node).ok_or(cuda::INVALID_VALUE)?;
        let g = self.graphs.get_mut(&graph).ok_or(cuda::INVALID_VALUE)?;
        let i = g.index(node).ok_or(cuda::INVALID_VALUE)?;
        Ok(&mut g.nodes[i])
    }

    /// `cudaGraphAddDependencies`: each `(from, to)` makes `to` depend on `from`. Every edge is checked
    /// before any is added: nodes of another graph, a node on itself, an edge that exists or is given
    /// twice are `cudaErrorInvalidValue`.
    pub fn add_edges(&mut self, graph: u64, edges: &[(u64, u64)]) -> Result<(), CudaError> {
        let g = self.graph(graph)?;
        for (i, &(from, to)) in edges.iter().enumerate() {
            let (Some(_), Some(t)) = (g.index(from), g.index(to)) else { return Err(cuda::INVALID_VALUE) };
            if from == to || g.nodes[t].deps.contains(&from) || edges[..i].contains(&(from, to)) {
                return Err(cuda::INVALID_VALUE);
            }
        }
        for &(from, to) in edges {
            self.node_mut(to)?.deps.push(from);
        }
        Ok(())
    }

    /// `cudaGraphInstantiate`: an executable graph of `graph`'s work as it is now; its handle.
    pub fn instantiate(&mut self, graph: u64) -> Result<u64, CudaError> {
        let steps = self.graph(graph)?.plan()?;
        let h = self.handle();
        self.execs.insert(h, Exec { steps });
        Ok(h)
    }

    /// Executable graph `exec`; `cudaErrorInvalidValue` for a handle that names none.
    pub fn exec(&self, exec: u64) -> Result<&Exec, CudaError> {
        self.execs.get(&exec).ok_or(cuda::INVALID_VALUE)
    }

    /// Executable graph `exec`, for writing.
    pub fn exec_mut(&mut self, exec: u64) -> Result<&mut Exec, CudaError> {
        self.execs.get_mut(&exec).ok_or(cuda::INVALID_VALUE)
    }

    /// `cudaGraphExecDestroy`.
    pub fn destroy_exec(&mut self, exec: u64) -> Result<(), CudaError> {
        self.execs.remove(&exec).map(|_| ()).ok_or(cuda::INVALID_VALUE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The order of `g`'s work as indices of the nodes (by creation) that run, for `Empty` nodes.
    fn run_order(graphs: &Graphs, g: u64) -> Vec<u64> {
        let nodes = &graphs.graph(g).expect("a graph").nodes;
        let plan = graphs.graph(g).expect("a graph").plan().expect("acyclic");
        plan.iter().map(|s| nodes.iter().position(|n| Some(n.handle) == s.node).expect("a node") as u64).collect()
    }

    #[test]
    fn nodes_run_after_their_dependencies_ties_in_creation_order() {
        let mut gs = Graphs::default();
        let g = gs.create();
        // A diamond created bottom first: d depends on b and c, which depend on a.
        let d0 = gs.add(g, &[], Work::Empty).expect("adds");
        let b = gs.add(g, &[], Work::Empty).expect("adds");
        let c = gs.add(g, &[], Work::Empty).expect("adds");
        let a = gs.add(g, &[], Work::Empty).expect("adds");
        gs.add_edges(g, &[(b, d0), (c, d0), (a, b), (a, c)]).expect("edges");
        assert_eq!(run_order(&gs, g), [3, 1, 2, 0], "a, then b and c in creation order, then d");
        let e = gs.add(g, &[], Work::Empty).expect("adds");
        assert_eq!(run_order(&gs, g), [3, 1, 2, 0, 4], "an independent later node runs after the earlier ready ones");
        gs.add_edges(g, &[(e, a)]).expect("edge");
        assert_eq!(run_order(&gs, g), [4, 3, 1, 2, 0], "a dependency added later moves it first");
        assert_eq!(gs.graph(g).expect("a graph").roots(), [e]);
        assert!(gs.graph(g).expect("a graph").reaches(e, d0) && !gs.graph(g).expect("a graph").reaches(d0, e));
    }

    #[test]
    fn cycles_and_bad_edges_are_refused() {
        let mut gs = Graphs::default();
        let (g, other) = (gs.create(), gs.create());
        let a = gs.add(g, &[], Work::Empty).expect("adds");
        let b = gs.add(g, &[a], Work::Empty).expect("adds");
        let x = gs.add(other, &[], Work::Empty).expect("adds");
        assert_eq!(gs.add(g, &[a, a], Work::Empty), Err(cuda::INVALID_VALUE), "a dependency twice");
        assert_eq!(gs.add(g, &[x], Work::Empty), Err(cuda::INVALID_VALUE), "another graph's node");
        assert_eq!(gs.add_edges(g, &[(a, b)]), Err(cuda::INVALID_VALUE), "an existing edge");
        assert_eq!(gs.add_edges(g, &[(a, a)]), Err(cuda::INVALID_VALUE), "a node on itself");
        assert_eq!(gs.add_edges(g, &[(b, a), (x, a)]), Err(cuda::INVALID_VALUE), "checked before any is added");
        assert_eq!(gs.graph(g).expect("a graph").nodes[0].deps, Vec::<u64>::new());
        gs.add_edges(g, &[(b, a)]).expect("a cycle is only found at instantiation");
        assert_eq!(gs.instantiate(g), Err(cuda::INVALID_VALUE));
        assert!(gs.instantiate(other).is_ok());
        assert_eq!(gs.destroy(g), Ok(()));
        assert_eq!(gs.node(a).map(|(n, _)| n.handle), Err(cuda::INVALID_VALUE), "its nodes are gone");
        assert_eq!(gs.destroy(g), Err(cuda::INVALID_VALUE));
    }

    #[test]
    fn a_child_graph_runs_in_place_of_its_node_and_executables_keep_their_work() {
        let mut gs = Graphs::default();
        let child = gs.create();
        let c1 = gs.add(child, &[], Work::Record(2)).expect("adds");
        let c2 = gs.add(child, &[], Work::Record(1)).expect("adds");
        gs.add_edges(child, &[(c2, c1)]).expect("the second first");
        let works = gs.graph(child).expect("a graph").plan().expect("acyclic").into_iter().map(|s| s.work).collect();
        let g = gs.create();
        let first = gs.add(g, &[], Work::Record(0)).expect("adds");
        let node = gs.add(g, &[first], Work::Child(works)).expect("adds");
        gs.add(g, &[node], Work::Record(3)).expect("adds");
        let exec = gs.instantiate(g).expect("instantiates");
        gs.add(g, &[], Work::Record(9)).expect("a node added after instantiation");
        let steps = &gs.exec(exec).expect("an executable graph").steps;
        let events: Vec<u64> = steps.iter().map(|s| if let Work::Record(e) = s.work { e } else { u64::MAX }).collect();
        assert_eq!(events, [0, 1, 2, 3]);
        assert_eq!(steps.iter().map(|s| s.node.is_some()).collect::<Vec<_>>(), [true, false, false, true]);
        assert_eq!(gs.destroy_exec(exec), Ok(()));
        assert!(gs.exec(exec).is_err());
    }
}
