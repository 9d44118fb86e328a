// SPDX-License-Identifier: Apache-2.0
/* The ssd model's parameters (README.md: "ssd").  Every flash parameter is
 * MQSim's default configuration (Tavakkol et al., FAST 2018; the file
 * ssdconfig.xml of github.com/CMU-SAFARI/MQSim at commit 0d76b1d). */
#ifndef SD_SSD_H
#define SD_SSD_H

#include <stdint.h>

#define SSD_CHANNELS 8          /* Flash_Channel_Count */
#define SSD_CHIPS_PER_CHANNEL 4 /* Chip_No_Per_Channel */
#define SSD_DIES_PER_CHIP 2     /* Die_No_Per_Chip */
#define SSD_PAGES_PER_BLOCK 256 /* Page_No_Per_Block */
#define SSD_PAGE_BYTES 8192     /* Page_Capacity */
#define SSD_READ_NS 75000       /* Page_Read_Latency_* */
#define SSD_PROGRAM_NS 75000    /* Page_Program_Latency_* */
#define SSD_ERASE_NS 3800000    /* Block_Erase_Latency */
#define SSD_OP 0.07             /* Overprovisioning_Ratio */
#define SSD_GC_THRESHOLD 0.05   /* GC_Exec_Threshold: free blocks of a die */
/* Channel_Transfer_Rate 333 MT/s times Flash_Channel_Width 1 byte */
#define SSD_CHANNEL_RATE 333e6
/* Data_Cache_Capacity: the DRAM write buffer */
#define SSD_BUFFER_BYTES (256u << 20)
/* PCIe_Lane_Bandwidth 0.1 GB/s times PCIe_Lane_Count 4 */
#define SSD_HOST_RATE 400e6
/* The mapping unit: the host's 4 KiB block; a page holds two. */
#define SSD_UNIT_BYTES 4096
#define SSD_DIES (SSD_CHANNELS * SSD_CHIPS_PER_CHANNEL * SSD_DIES_PER_CHIP)
/* Greedy GC needs a few blocks per die to choose from. */
#define SSD_MIN_BLOCKS_PER_DIE 8

struct sd_ssd_stats {
  uint64_t host_units;  /* 4 KiB units the host wrote */
  uint64_t flash_units; /* units programmed: the host's and GC's */
  uint64_t erases;
  uint64_t gc_moved;
};
struct sd_model;
void sd_ssd_stats(struct sd_model *m, struct sd_ssd_stats *s);

#endif
