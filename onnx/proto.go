package onnx

import (
	"encoding/binary"
	"math"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// The ONNX messages koopq writes, declared by hand from onnx.proto (IR
// version 8): only the fields an exported policy uses, each encoded with
// protowire under its onnx.proto field number. Field numbers are the wire
// format; names here are for the reader.

// Field numbers of onnx.proto's messages.
const (
	modelIRVersion     = 1  // ModelProto.ir_version: int64
	modelProducerName  = 2  // ModelProto.producer_name: string
	modelProducerVer   = 3  // ModelProto.producer_version: string
	modelDocString     = 6  // ModelProto.doc_string: string
	modelGraph         = 7  // ModelProto.graph: GraphProto
	modelOpsetImport   = 8  // ModelProto.opset_import: repeated OperatorSetIdProto
	modelMetadataProps = 14 // ModelProto.metadata_props: repeated StringStringEntryProto

	opsetDomain  = 1 // OperatorSetIdProto.domain: string
	opsetVersion = 2 // OperatorSetIdProto.version: int64

	graphNode        = 1  // GraphProto.node: repeated NodeProto
	graphName        = 2  // GraphProto.name: string
	graphInitializer = 5  // GraphProto.initializer: repeated TensorProto
	graphInput       = 11 // GraphProto.input: repeated ValueInfoProto
	graphOutput      = 12 // GraphProto.output: repeated ValueInfoProto

	nodeInput  = 1 // NodeProto.input: repeated string
	nodeOutput = 2 // NodeProto.output: repeated string
	nodeName   = 3 // NodeProto.name: string
	nodeOpType = 4 // NodeProto.op_type: string

	tensorDims     = 1 // TensorProto.dims: repeated int64
	tensorDataType = 2 // TensorProto.data_type: int32 (TensorProto.DataType)
	tensorName     = 8 // TensorProto.name: string
	tensorRawData  = 9 // TensorProto.raw_data: bytes (little-endian)

	valueInfoName = 1 // ValueInfoProto.name: string
	valueInfoType = 2 // ValueInfoProto.type: TypeProto

	typeTensorType = 1 // TypeProto.tensor_type: TypeProto.Tensor
	tensorElemType = 1 // TypeProto.Tensor.elem_type: int32
	tensorShape    = 2 // TypeProto.Tensor.shape: TensorShapeProto

	shapeDim       = 1 // TensorShapeProto.dim: repeated Dimension
	dimValue       = 1 // TensorShapeProto.Dimension.dim_value: int64
	dimParam       = 2 // TensorShapeProto.Dimension.dim_param: string
	entryKey       = 1 // StringStringEntryProto.key: string
	entryValue     = 2 // StringStringEntryProto.value: string
	dataTypeFloat  = 1 // TensorProto.DataType.FLOAT
	irVersion      = 8 // ONNX IR version 8 (onnx 1.10–1.12)
	opsetVersionNr = 13
)

func appendString(b []byte, field protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, field, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendVarint(b []byte, field protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, field, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendMessage(b []byte, field protowire.Number, msg []byte) []byte {
	b = protowire.AppendTag(b, field, protowire.BytesType)
	return protowire.AppendBytes(b, msg)
}

// tensor is a named float32 initializer of the given shape.
type tensor struct {
	name  string
	shape []int
	data  []float32
}

func (t tensor) encode() []byte {
	var b []byte
	for _, d := range t.shape {
		b = appendVarint(b, tensorDims, uint64(d))
	}
	b = appendVarint(b, tensorDataType, dataTypeFloat)
	b = appendString(b, tensorName, t.name)
	raw := make([]byte, 0, 4*len(t.data))
	for _, v := range t.data {
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
	}
	b = protowire.AppendTag(b, tensorRawData, protowire.BytesType)
	return protowire.AppendBytes(b, raw)
}

// node is one operator application.
type node struct {
	op      string
	inputs  []string
	outputs []string
}

func (n node) encode(name string) []byte {
	var b []byte
	for _, s := range n.inputs {
		b = appendString(b, nodeInput, s)
	}
	for _, s := range n.outputs {
		b = appendString(b, nodeOutput, s)
	}
	b = appendString(b, nodeName, name)
	return appendString(b, nodeOpType, n.op)
}

// valueInfo declares a float32 graph input or output of shape [batch, width]
// with a symbolic (dynamic) first dimension.
func valueInfo(name, batch string, width int) []byte {
	var shape []byte
	shape = appendMessage(shape, shapeDim, appendString(nil, dimParam, batch))
	shape = appendMessage(shape, shapeDim, appendVarint(nil, dimValue, uint64(width)))
	var tt []byte
	tt = appendVarint(tt, tensorElemType, dataTypeFloat)
	tt = appendMessage(tt, tensorShape, shape)
	var b []byte
	b = appendString(b, valueInfoName, name)
	return appendMessage(b, valueInfoType, appendMessage(nil, typeTensorType, tt))
}

// graph is a model under construction.
type graph struct {
	name    string
	nodes   []node
	inits   []tensor
	inputs  [][]byte
	outputs [][]byte
}

func (g *graph) add(op string, out string, in ...string) string {
	g.nodes = append(g.nodes, node{op: op, inputs: in, outputs: []string{out}})
	return out
}

func (g *graph) init(name string, shape []int, data []float32) string {
	g.inits = append(g.inits, tensor{name: name, shape: shape, data: data})
	return name
}

// model encodes a ModelProto holding g with opset 13 of the default domain.
func (g *graph) model(producer, version, doc string, meta [][2]string) []byte {
	var gb []byte
	for i, n := range g.nodes {
		gb = appendMessage(gb, graphNode, n.encode(n.op+"_"+strconv.Itoa(i)))
	}
	gb = appendString(gb, graphName, g.name)
	for _, t := range g.inits {
		gb = appendMessage(gb, graphInitializer, t.encode())
	}
	for _, v := range g.inputs {
		gb = appendMessage(gb, graphInput, v)
	}
	for _, v := range g.outputs {
		gb = appendMessage(gb, graphOutput, v)
	}
	var b []byte
	b = appendVarint(b, modelIRVersion, irVersion)
	b = appendString(b, modelProducerName, producer)
	b = appendString(b, modelProducerVer, version)
	if doc != "" {
		b = appendString(b, modelDocString, doc)
	}
	b = appendMessage(b, modelGraph, gb)
	b = appendMessage(b, modelOpsetImport, appendVarint(appendString(nil, opsetDomain, ""), opsetVersion, opsetVersionNr))
	for _, kv := range meta {
		b = appendMessage(b, modelMetadataProps, appendString(appendString(nil, entryKey, kv[0]), entryValue, kv[1]))
	}
	return b
}
