// The OpenH264 candidate of issue 36's library comparison (BENCHMARKS.md, "Animated previews as
// MP4"): encodes raw I420 frames with Debian's libopenh264 at a fixed QP (rate control off) and
// writes an Annex B stream, so that its bytes at a given SSIM can be set beside libx264's.
// Not part of the service.
//
//   cc -O2 openh264_candidate.c -o openh264_candidate -lopenh264
//   openh264_candidate IN.yuv WIDTH HEIGHT QP CABAC(0|1) OUT.264
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wels/codec_api.h>

int main(int argc, char **argv) {
    if (argc != 7) { fprintf(stderr, "usage: %s IN.yuv WIDTH HEIGHT QP CABAC OUT.264\n", argv[0]); return 2; }
    int width = atoi(argv[2]), height = atoi(argv[3]), qp = atoi(argv[4]), cabac = atoi(argv[5]);
    FILE *in = fopen(argv[1], "rb"), *out = fopen(argv[6], "wb");
    if (!in || !out) { perror("open"); return 1; }
    ISVCEncoder *encoder = NULL;
    if (WelsCreateSVCEncoder(&encoder) != 0 || !encoder) { fprintf(stderr, "no encoder\n"); return 1; }
    SEncParamExt param;
    (*encoder)->GetDefaultParams(encoder, &param);
    param.iUsageType = CAMERA_VIDEO_REAL_TIME;
    param.iPicWidth = width;
    param.iPicHeight = height;
    param.iRCMode = RC_OFF_MODE;
    param.fMaxFrameRate = 25;
    param.iTemporalLayerNum = 1;
    param.iSpatialLayerNum = 1;
    param.bEnableFrameSkip = 0;
    param.uiIntraPeriod = 250;
    param.iNumRefFrame = 4;
    param.iComplexityMode = HIGH_COMPLEXITY;
    param.iEntropyCodingModeFlag = cabac;
    param.iMultipleThreadIdc = 1;
    param.sSpatialLayers[0].iVideoWidth = width;
    param.sSpatialLayers[0].iVideoHeight = height;
    param.sSpatialLayers[0].fFrameRate = 25;
    param.sSpatialLayers[0].iSpatialBitrate = 10000000;
    param.sSpatialLayers[0].iMaxSpatialBitrate = UNSPECIFIED_BIT_RATE;
    param.sSpatialLayers[0].uiProfileIdc = cabac ? PRO_MAIN : PRO_BASELINE;
    param.sSpatialLayers[0].iDLayerQp = qp;
    param.sSpatialLayers[0].sSliceArgument.uiSliceMode = SM_SINGLE_SLICE;
    if ((*encoder)->InitializeExt(encoder, &param) != 0) { fprintf(stderr, "InitializeExt failed\n"); return 1; }
    size_t frameBytes = (size_t)width * height * 3 / 2;
    unsigned char *frame = malloc(frameBytes);
    SSourcePicture picture;
    memset(&picture, 0, sizeof picture);
    picture.iColorFormat = videoFormatI420;
    picture.iPicWidth = width;
    picture.iPicHeight = height;
    picture.iStride[0] = width;
    picture.iStride[1] = picture.iStride[2] = width / 2;
    picture.pData[0] = frame;
    picture.pData[1] = frame + width * height;
    picture.pData[2] = frame + width * height * 5 / 4;
    long frames = 0, bytes = 0;
    while (fread(frame, 1, frameBytes, in) == frameBytes) {
        SFrameBSInfo info;
        memset(&info, 0, sizeof info);
        picture.uiTimeStamp = frames * 40;
        if ((*encoder)->EncodeFrame(encoder, &picture, &info) != cmResultSuccess) { fprintf(stderr, "EncodeFrame failed\n"); return 1; }
        if (info.eFrameType == videoFrameTypeSkip) { fprintf(stderr, "frame %ld skipped\n", frames); return 1; }
        for (int layer = 0; layer < info.iLayerNum; layer++) {
            SLayerBSInfo *l = &info.sLayerInfo[layer];
            int size = 0;
            for (int n = 0; n < l->iNalCount; n++) size += l->pNalLengthInByte[n];
            fwrite(l->pBsBuf, 1, size, out);
            bytes += size;
        }
        frames++;
    }
    (*encoder)->Uninitialize(encoder);
    WelsDestroySVCEncoder(encoder);
    fclose(out);
    printf("%ld frames, %ld bytes\n", frames, bytes);
    return 0;
}
