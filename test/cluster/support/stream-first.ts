/** The first sequence a JetStream stream still holds (what its retention left), asked of the servers directly. */
import { jetstreamManager } from '@nats-io/jetstream'
import { connect } from '@nats-io/transport-node'

export async function streamFirstSequence(natsUrls: readonly string[], stream: string): Promise<number> {
  const nc = await connect({ servers: [...natsUrls] })
  try {
    return (await (await jetstreamManager(nc)).streams.info(stream)).state.first_seq
  } finally {
    await nc.close()
  }
}
