"""nhens-symbolic: nhens system plugins derived with SymPy from a short Python description
(docs/guide/symbolic.md). Modules: description (read and validate), derive (the callbacks' expressions
and the descriptor's properties), emit (the C source), cli (build and `nhens check`)."""
