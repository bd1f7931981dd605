"""Work that spans the layers: promotion (the norn-pass), sync with a remote, status, making and installing
a store, and an agent harness's session hooks."""
