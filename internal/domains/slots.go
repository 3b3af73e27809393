package domains

// Stride separates the pod numbers of two domains: the pods of the domain at
// index i are numbered i·Stride to i·Stride + Stride - 1. A domain never runs
// that many pods (a Cluster runs at most 10,000 replicas, plus as many
// replacements).
const Stride = 100_000

// Slot is the placement number of the pod with the given ordinal in the
// domain at index.
func Slot(index, ordinal int) int {
	return index*Stride + ordinal
}

// Locate is the inverse of Slot: the domain index and ordinal of a pod number.
func Locate(slot int) (index, ordinal int) {
	return slot / Stride, slot % Stride
}
