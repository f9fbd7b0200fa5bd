package io.strato.client;

import io.strato.client.wire.BlockId;
import io.strato.client.wire.DataConn;
import io.strato.proto.v1.BlockID;
import io.strato.proto.v1.BlockLocation;
import java.io.IOException;

/** Test access to KeyReader's verification of READ_CHUNK responses. */
public final class KeyReaderAccess {
  private KeyReaderAccess() {}

  public static void verify(BlockId id, long off, DataConn.Response r, byte[] dst, int len) throws IOException {
    Blk bl = new Blk(BlockLocation.newBuilder()
        .setBlockId(BlockID.newBuilder().setContainerId(id.containerId()).setLocalId(id.localId())).build());
    KeyReader.verify(bl, off, r, dst, 0, len);
  }
}
