package io.strato.client;

import io.strato.client.wire.BlockId;
import io.strato.proto.v1.BlockLocation;
import io.strato.proto.v1.DatanodeDetails;
import java.util.ArrayList;
import java.util.List;

/** A block being written or read: its ID, pipeline (leader first) and length. */
final class Blk {
  final BlockId id;
  final long pipelineId;
  final List<DatanodeDetails> members;
  long offset;
  long length;
  /** The block token meta gave with the location (docs/wire.md §5.9); empty without block tokens. */
  final byte[] token;

  Blk(BlockLocation bl) {
    this.id = new BlockId(bl.getBlockId().getContainerId(), bl.getBlockId().getLocalId());
    this.pipelineId = bl.getPipeline().getId();
    this.members = bl.getPipeline().getMembersList();
    this.offset = bl.getOffset();
    this.length = bl.getLength();
    this.token = bl.getToken().toByteArray();
  }

  String leader() throws java.io.IOException {
    if (members.isEmpty()) {
      throw new java.io.IOException("strato: block " + id + " has no pipeline");
    }
    return members.get(0).getDataAddr();
  }

  List<String> followers() {
    List<String> f = new ArrayList<>();
    for (int i = 1; i < members.size(); i++) {
      f.add(members.get(i).getDataAddr());
    }
    return f;
  }

  BlockLocation toLocation() {
    return BlockLocation.newBuilder()
        .setBlockId(io.strato.proto.v1.BlockID.newBuilder().setContainerId(id.containerId()).setLocalId(id.localId()))
        .setLength(length).build();
  }
}
